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

/** 850ms, 12s, 3m, 5h20m, 2d: short enough for a column, and changing at most once a second. */
export function span(ms: number): string {
  // A clock a moment behind a run that just started is not a negative duration.
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = ms / 1000;
  // Floored, as ages are: a run 14.6 s old that ran 14.6 s reads "14s" for both, not "14s" and "15s".
  if (s < 60) return `${s < 10 ? (Math.floor(s * 10) / 10).toFixed(1) : Math.floor(s)}s`;
  const m = s / 60;
  if (m < 60) return `${Math.floor(m)}m`;
  const h = m / 60;
  if (h < 24) return `${Math.floor(h)}h${Math.floor(m % 60) > 0 && h < 10 ? `${Math.floor(m % 60)}m` : ""}`;
  return `${Math.floor(h / 24)}d`;
}

/** A length given in seconds, exactly, in the largest unit that holds it whole: `90s`, `5m`, `36h`, `2d` (as --deadline and --jitter take them). */
export function exactLength(seconds: number): string {
  for (const [unit, size] of [["d", 86_400], ["h", 3_600], ["m", 60]] as const) if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** A file opened in $EDITOR without its `//` lines: the header written above the JSON, and any a person added on their own lines. */
export function withoutCommentLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("//"))
    .join("\n");
}
