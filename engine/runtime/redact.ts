import { MAX_DEPTH } from "../state/limits.js";

/**
 * Names of secrets, matched against a key's words — split at case changes, `_`, `-`, `.` and
 * spaces, lower-cased, plurals made singular — so that `apiKey`, `x-api-key`, `API_KEYS` and
 * `apikey` all match `apiKey`. Names that are words of their own (`password`, `secret`) match
 * anywhere in a key (`secretAccessKey`, `aws_secret_access_key`, `passwordHash`); the others
 * (`token`, `apiKey`) only at its end (`accessToken`, but not `tokenizer`), so that a key about
 * them is kept.
 */
export const DEFAULT_SECRET_KEYS = [
  "apiKey",
  "apikey",
  "accessKey",
  "accesskey",
  "privateKey",
  "privatekey",
  "secretKey",
  "secretkey",
  "token",
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "authorization",
  "cookie",
  "credential",
] as const;

/** Default names that match only at a key's end: `token` in `tokenizer` or `tokenUsage` is not one. */
const AT_END = new Set(["apikey", "accesskey", "privatekey", "secretkey", "token", "api key", "access key", "private key", "secret key"]);

/**
 * Last words that make a key about a secret rather than the secret itself: `tokenCount`,
 * `passwordLength`, `secretName`, `maxTokens`... Counts stay visible.
 */
const ABOUT = normalized([
  "count",
  "max",
  "min",
  "limit",
  "length",
  "size",
  "total",
  "used",
  "usage",
  "remaining",
  "budget",
  "type",
  "name",
  "id",
  "ttl",
  "expiry",
  "expire",
  "at",
  "url",
  "uri",
  "path",
  "file",
  "endpoint",
  "policy",
  "required",
  "enabled",
]);

/** Words before `token` that make it a count of a model's tokens: `promptTokens`, `max_tokens`. */
const TOKEN_USAGE = normalized(["prompt", "completion", "total", "max", "min", "input", "output", "cached", "reasoning", "audio", "image", "text", "used", "remaining", "num"]);

function normalized(names: readonly string[]): Set<string> {
  return new Set(names.map(singular));
}

export const REDACTED = "[redacted]";
/** What is left of a value nested deeper than redaction looks (and than state may hold). */
export const TOO_DEEP = "[too deep to show]";
/** Redaction looks this deep: state values (MAX_DEPTH) inside the records that carry them. */
const REDACT_DEPTH = MAX_DEPTH + 64;

/** A key in words: `x-API_Keys` → `["x", "api", "key"]`. */
function words(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "")
    .map(singular);
}

/** One form for a word and its plural (`cookies`, `cookie` → `cooky`; `policies` → `policy`), names and keys alike. */
function singular(word: string): string {
  const one = word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
  return one.endsWith("ie") ? `${one.slice(0, -2)}y` : one;
}

interface Pattern {
  words: string[];
  atEnd: boolean;
}

/** Decides for one list of names; made once per list. */
class SecretMatcher {
  private readonly patterns: Pattern[];

  constructor(extra: readonly string[]) {
    const names = [...new Set([...DEFAULT_SECRET_KEYS, ...extra])];
    this.patterns = names.map((name) => {
      const w = words(name);
      return { words: w, atEnd: AT_END.has(w.join(" ")) };
    });
  }

  /** Whether `key`'s value is hidden; `value` tells a count of tokens (kept) from a token. */
  hides(key: string, value?: unknown): boolean {
    const w = words(key);
    if (w.length === 0) return false;
    let onlyToken = true;
    let found = false;
    for (const pattern of this.patterns) {
      const at = this.matchAt(w, pattern);
      if (at === undefined) continue;
      const end = at + pattern.words.length - 1;
      if (end < w.length - 1 && ABOUT.has(w[w.length - 1]!)) continue;
      if (pattern.words.join(" ") === "token" && isTokenUsage(w, end)) continue;
      found = true;
      if (pattern.words.join(" ") !== "token") onlyToken = false;
    }
    // `tokens: 1320`, `tokens: { prompt: 92, completion: 38 }`: a count, not a token.
    return found && !(onlyToken && isCount(value, 0));
  }

  /**
   * Where the pattern's words sit in the key's (the key's word may end with the pattern's last
   * word: `accesstoken`, `xapikey`); undefined when they do not, or not at its end when they must.
   */
  private matchAt(key: string[], pattern: Pattern): number | undefined {
    const n = pattern.words.length;
    const starts = pattern.atEnd ? [key.length - n] : Array.from({ length: key.length - n + 1 }, (_, i) => i);
    for (const i of starts) {
      if (i < 0) continue;
      const fits = pattern.words.every((word, j) => (j === 0 ? key[i + j]!.endsWith(word) : key[i + j] === word));
      if (fits) return i;
    }
    return undefined;
  }
}

/** `promptTokens`, `max_tokens`, `completiontokens`: counts of a model's tokens. */
function isTokenUsage(key: string[], at: number): boolean {
  const word = key[at]!;
  const joined = word.slice(0, word.length - "token".length);
  return (joined !== "" && TOKEN_USAGE.has(joined)) || (at > 0 && joined === "" && TOKEN_USAGE.has(key[at - 1]!));
}

function isCount(value: unknown, depth: number): boolean {
  if (typeof value === "number") return true;
  if (depth > 2 || value === null || typeof value !== "object") return false;
  const members = Object.values(value);
  return members.length > 0 && members.every((member) => isCount(member, depth + 1));
}

const matchers = new WeakMap<readonly string[], SecretMatcher>();
const NO_EXTRA: readonly string[] = [];

function matcherFor(secretKeys: readonly string[]): SecretMatcher {
  let matcher = matchers.get(secretKeys);
  if (!matcher) {
    matcher = new SecretMatcher(secretKeys);
    matchers.set(secretKeys, matcher);
  }
  return matcher;
}

/** Whether a key names a secret, by the default names and `secretKeys` (added to them). */
export function isSecretKey(key: string, secretKeys: readonly string[] = NO_EXTRA, value?: unknown): boolean {
  return matcherFor(secretKeys).hides(key, value);
}

/**
 * A copy of `value` with the values of secret-looking keys replaced, at any depth (past
 * `REDACT_DEPTH`, deeper than state may nest, what is left is replaced whole). JSON objects and
 * arrays in text — a model's tool-call arguments, a tool's result as an agent sends it back —
 * are looked into too, and written again only when something in them was hidden. `secretKeys`
 * are names added to the defaults.
 */
export function redact(value: unknown, secretKeys: readonly string[] = NO_EXTRA): unknown {
  return walk(value, matcherFor(secretKeys), 0);
}

/** Fields that hold the value at an object's `path` (JSON Patch operations, state diff entries). */
const VALUE_FIELDS = new Set(["value", "old", "items"]);

function walk(value: unknown, matcher: SecretMatcher, depth: number): unknown {
  if (typeof value === "string") return depth < REDACT_DEPTH && (value.includes("{") || value.includes("[")) ? inJsonText(value, matcher, depth) : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= REDACT_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => walk(item, matcher, depth + 1));
  // `{ path: "/auth/apiKey", value: ... }`: the path names the key the value belongs to.
  const path = (value as { path?: unknown }).path;
  const hiddenByPath = typeof path === "string" && matcher.hides(lastPathKey(path));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = matcher.hides(key, inner) || (hiddenByPath && VALUE_FIELDS.has(key)) ? REDACTED : walk(inner, matcher, depth + 1);
  }
  return out;
}

/** How many JSON-looking pieces of one text are tried before the rest is left as it is. */
const MAX_PIECES = 100;

/**
 * Text with the JSON objects and arrays in it (all of it, as a tool's result an agent sends back,
 * or a part: `(… changed the arguments to {...} before it ran.) {...}`) redacted inside; each
 * piece is written again only when something in it was hidden.
 */
function inJsonText(text: string, matcher: SecretMatcher, depth: number): string {
  let out = "";
  let from = 0;
  let tries = 0;
  for (let i = firstOpening(text, 0); i >= 0 && tries < MAX_PIECES; i = firstOpening(text, i)) {
    const end = closingOf(text, i);
    if (end < 0) break;
    tries++;
    const piece = text.slice(i, end + 1);
    let parsed: unknown;
    try {
      parsed = JSON.parse(piece);
    } catch {
      i++;
      continue;
    }
    const again = JSON.stringify(walk(parsed, matcher, depth + 1));
    if (again !== JSON.stringify(parsed)) {
      out += text.slice(from, i) + again;
      from = end + 1;
    }
    i = end + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

function firstOpening(text: string, from: number): number {
  const object = text.indexOf("{", from);
  const array = text.indexOf("[", from);
  return object < 0 ? array : array < 0 ? object : Math.min(object, array);
}

/** Where the bracket opened at `start` closes, strings in JSON's quotes skipped; -1 when it does not. */
function closingOf(text: string, start: number): number {
  let level = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") level++;
    else if (c === "}" || c === "]") {
      level--;
      if (level === 0) return i;
    }
  }
  return -1;
}

/**
 * The last key a JSON path (`$.auth.apiKey`, `$["x-api-key"][0]`) or a JSON Pointer
 * (`/auth/apiKey`) names.
 */
function lastPathKey(path: string): string {
  if (path.startsWith("/")) {
    const parts = path.split("/").filter((p) => !/^\d+$/.test(p) && p !== "-");
    return (parts[parts.length - 1] ?? "").replace(/~1/g, "/").replace(/~0/g, "~");
  }
  const match = /(?:\.([^.[\]]+)|\["((?:[^"\\]|\\.)*)"\])(?:\[\d+\])*$/.exec(path);
  return match ? (match[1] ?? JSON.parse(`"${match[2]}"`)) : "";
}

/**
 * `edited` — a value a person changed from its redacted form — with each `[redacted]` left in it
 * given back its value in `original`, where that has one at the same place.
 */
export function restoreHidden(edited: unknown, original: unknown): unknown {
  if (edited === REDACTED) return original === undefined ? edited : original;
  if (edited === null || typeof edited !== "object" || original === null || typeof original !== "object") return edited;
  if (Array.isArray(edited)) return edited.map((item, i) => restoreHidden(item, Array.isArray(original) ? original[i] : undefined));
  return Object.fromEntries(Object.entries(edited).map(([key, value]) => [key, restoreHidden(value, Object.hasOwn(original, key) ? (original as Record<string, unknown>)[key] : undefined)]));
}
