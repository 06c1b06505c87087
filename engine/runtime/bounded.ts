import { jsonBytes } from "../state/snapshot.js";

/** What a durable call's record keeps of its input at most: bytes of JSON. */
export const CALL_INPUT_MAX_BYTES = 8 * 1024;

/** What is left of a value whose JSON was still too large once its long strings were cut. */
export interface CutValue {
  /** The start of its JSON text, ending with `…`. */
  cut: string;
  /** The size of its whole JSON text. */
  bytes: number;
}

/** Strings are not cut shorter than this: past it, the JSON text is. */
const MIN_STRING_CHARS = 64;

/**
 * `value` as a record for people keeps it, at most `maxBytes` of JSON: its long strings are cut,
 * each saying how much it lost, to a quarter of that, then shorter until it fits (a prompt with a
 * long document in it keeps its other messages whole, its shape always); a value still too large
 * (thousands of short strings) keeps the start of its JSON text.
 */
export function boundedValue(value: unknown, maxBytes = CALL_INPUT_MAX_BYTES): unknown {
  if (jsonBytes(value) <= maxBytes) return value;
  for (let chars = Math.floor(maxBytes / 4); chars >= MIN_STRING_CHARS; chars = Math.floor(chars / 2)) {
    const shortened = cutStrings(value, chars, 0);
    if (jsonBytes(shortened) <= maxBytes) return shortened;
  }
  const text = Buffer.from(JSON.stringify(value) ?? "null");
  // A character cut in two at the end is left out.
  return { cut: `${text.subarray(0, maxBytes).toString("utf8").replace(/\uFFFD$/, "")}…`, bytes: text.byteLength } satisfies CutValue;
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
