import { ValidationError } from "./errors.js";

/** A run's tags: what its starter names it by (a ticket, a customer), to find it again (`runs --tag`). */
export type RunTags = Record<string, string>;

const TAG_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_TAGS = 16;
const MAX_VALUE = 256;

/**
 * Checks tags given to a start (Temporal's search attributes, at their simplest): at most 16, keys
 * of letters, digits, '.', '_' and '-' (at most 64), values text of at most 256 characters
 * without control characters. Returns them as given; throws a ValidationError naming the first
 * problem.
 */
export function checkTags(tags: unknown): RunTags {
  if (tags === null || typeof tags !== "object" || Array.isArray(tags)) throw new ValidationError("tags must be an object of names to text values");
  const entries = Object.entries(tags);
  if (entries.length > MAX_TAGS) throw new ValidationError(`${entries.length} tags: a run has at most ${MAX_TAGS}`);
  for (const [key, value] of entries) {
    if (!TAG_KEY.test(key)) throw new ValidationError(`tag name ${JSON.stringify(key)} may only use letters, digits, '.', '_' and '-' (at most 64)`);
    if (typeof value !== "string") throw new ValidationError(`tag ${key} is ${JSON.stringify(value)}: a tag's value is text`);
    if (value.length > MAX_VALUE) throw new ValidationError(`tag ${key} is ${value.length} characters long: at most ${MAX_VALUE}`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value)) throw new ValidationError(`tag ${key} has a control character in its value`);
  }
  return tags as RunTags;
}

/** Whether a run has every one of `wanted`'s tags with its value. */
export function hasTags(run: { tags?: RunTags }, wanted: RunTags | undefined): boolean {
  if (!wanted) return true;
  return Object.entries(wanted).every(([key, value]) => run.tags?.[key] === value);
}
