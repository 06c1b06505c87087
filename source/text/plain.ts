import stripAnsi from "strip-ansi";

/** Text from state, events or errors, made safe to print: no escape sequences or control characters. */
export function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return stripAnsi(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "").replace(/\n/g, " ⏎ ");
}

/** A value on one line, safe to print and at most `max` characters: strings as they are, anything else as JSON. */
export function inline(value: unknown, max = 80): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "undefined");
  const safe = clean(text);
  if (safe.length <= max) return safe;
  // By code point: cutting between the halves of a surrogate pair would print "�".
  const points = Array.from(safe);
  return points.length > max ? `${points.slice(0, max - 1).join("")}…` : safe;
}

/** `1 run`, `3 runs`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** How long something took: `850ms`, `1.5s`, `2m5s`. */
export function duration(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** A file opened in $EDITOR without its `//` lines: the header written above the JSON, and any a person added on their own lines. */
export function withoutCommentLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("//"))
    .join("\n");
}
