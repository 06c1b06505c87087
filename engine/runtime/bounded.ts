/** What a durable call's record keeps of its input at most: bytes of JSON. */
export const CALL_INPUT_MAX_BYTES = 8 * 1024;

/** What is left of a value whose JSON was still too large once its long strings were cut. */
export interface CutValue {
  /** The start of its JSON text, ending with `…`. */
  cut: string;
  /** The size of its whole JSON text. */
  bytes: number;
}

/**
 * `value` as a record for people keeps it, at most `maxBytes` of JSON: first each string longer
 * than a quarter of that is cut, saying how much it lost (a prompt with a long document in it
 * keeps its other messages whole); if the whole is still too large, its JSON text is cut.
 */
export function boundedValue(value: unknown, maxBytes = CALL_INPUT_MAX_BYTES): unknown {
  if (jsonBytes(value) <= maxBytes) return value;
  const shortened = cutStrings(value, Math.floor(maxBytes / 4), 0);
  const bytes = jsonBytes(shortened);
  if (bytes <= maxBytes) return shortened;
  const text = Buffer.from(JSON.stringify(value) ?? "null");
  // A character cut in two at the end is left out.
  return { cut: `${text.subarray(0, maxBytes).toString("utf8").replace(/\uFFFD$/, "")}…`, bytes: text.byteLength } satisfies CutValue;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "null");
}

function cutStrings(value: unknown, maxChars: number, depth: number): unknown {
  if (typeof value === "string") return value.length > maxChars ? `${cutText(value, maxChars)}… (${value.length - maxChars} more characters)` : value;
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, maxChars, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cutStrings(inner, maxChars, depth + 1)]));
}

/** The first `max` UTF-16 units of `text`, never ending between the halves of a surrogate pair. */
function cutText(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
