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

/** Returns a copy of `value` with the values of secret-looking keys replaced, at any depth. */
export function redact(value: unknown, secretKeys: readonly string[] = DEFAULT_SECRET_KEYS): unknown {
  const patterns = secretKeys.map((k) => k.toLowerCase().replace(/[-_]/g, ""));
  const isSecret = (key: string) => {
    const k = key.toLowerCase().replace(/[-_]/g, "");
    return patterns.some((p) => k.endsWith(p));
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > 32 || v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, inner] of Object.entries(v)) out[k] = isSecret(k) ? REDACTED : walk(inner, depth + 1);
    return out;
  };
  return walk(value, 0);
}
