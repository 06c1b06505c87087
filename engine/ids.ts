import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function base32(bytes: Uint8Array, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! % 32];
  return out;
}

/** A short random id (`run-7k2m9q4x1z`): easy to read aloud and to type into the CLI. */
export function newId(prefix: string, length = 10): string {
  return `${prefix}-${base32(randomBytes(length), length)}`;
}

/** A deterministic id derived from its parts, for things that must keep their id across re-runs. */
export function derivedId(prefix: string, ...parts: (string | number)[]): string {
  const digest = createHash("sha256").update(parts.join("\u0000")).digest();
  return `${prefix}-${base32(digest, 10)}`;
}

export function hexDigest(text: string, hexChars: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, hexChars);
}

export function checkpointId(runId: string, n: number): string {
  return `${runId}:${n}`;
}

export function taskId(runId: string, step: number, node: string, index: number | null): string {
  return index === null ? `${runId}:${step}:${node}` : `${runId}:${step}:${node}#${index}`;
}

/** OpenTelemetry-shaped ids: 32 hex characters per run, 16 per task attempt. */
export function traceIdOf(runId: string): string {
  return hexDigest(`trace:${runId}`, 32);
}

export function spanIdOf(taskId: string, attempt: number): string {
  return hexDigest(`span:${taskId}:${attempt}`, 16);
}
