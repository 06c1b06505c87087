/**
 * Keys whose values never reach the event log. A key matches when, lower-cased and without `-`
 * and `_`, it ends with one of these (`accessToken`, `x-api-key`), so `promptTokens` is kept.
 */
export const DEFAULT_SECRET_KEYS = [
  "apikey",
  "token",
  "password",
  "passwd",
  "secret",
  "secretkey",
  "authorization",
  "cookie",
  "credential",
  "credentials",
  "privatekey",
];

export const REDACTED = "[redacted]";

const matchers = new WeakMap<readonly string[], (key: string) => boolean>();

/** Whether a key (or the last segment of a JSON path like `$.auth.apiKey`) names a secret. */
function isSecretKey(key: string, secretKeys: readonly string[] = DEFAULT_SECRET_KEYS): boolean {
  let match = matchers.get(secretKeys);
  if (!match) {
    const patterns = secretKeys.map((k) => k.toLowerCase().replace(/[-_]/g, ""));
    match = (k: string) => {
      const normal = k.toLowerCase().replace(/[-_]/g, "");
      return patterns.some((p) => normal.endsWith(p));
    };
    matchers.set(secretKeys, match);
  }
  return match(key);
}

/** Returns a copy of `value` with the values of secret-looking keys replaced, at any depth. */
export function redact(value: unknown, secretKeys: readonly string[] = DEFAULT_SECRET_KEYS): unknown {
  return walk(value, secretKeys, 0);
}

/** Fields that hold the value at an object's `path` (JSON Patch operations, state diff entries). */
const VALUE_FIELDS = new Set(["value", "old", "items"]);

function walk(value: unknown, secretKeys: readonly string[], depth: number): unknown {
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => walk(item, secretKeys, depth + 1));
  // `{ path: "/auth/apiKey", value: ... }`: the path names the key the value belongs to.
  const path = (value as { path?: unknown }).path;
  const hiddenByPath = typeof path === "string" && isSecretKey(lastPathKey(path), secretKeys);
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = isSecretKey(key, secretKeys) || (hiddenByPath && VALUE_FIELDS.has(key)) ? REDACTED : walk(inner, secretKeys, depth + 1);
  }
  return out;
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
