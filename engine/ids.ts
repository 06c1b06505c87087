import { hash, randomBytes } from "node:crypto";

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
  const digest = hash("sha256", parts.join("\u0000"), "buffer");
  return `${prefix}-${base32(digest, 10)}`;
}

export function hexDigest(text: string, hexChars: number): string {
  return hash("sha256", text, "hex").slice(0, hexChars);
}

export function checkpointId(runId: string, n: number): string {
  return `${runId}:${n}`;
}

/** The run and number a checkpoint id names; undefined for text that is not a checkpoint id. */
export function parseCheckpointId(id: string): { runId: string; n: number } | undefined {
  const i = id.lastIndexOf(":");
  const n = Number(id.slice(i + 1));
  return i > 0 && Number.isInteger(n) && n >= 0 && /^\d+$/.test(id.slice(i + 1)) ? { runId: id.slice(0, i), n } : undefined;
}

export function taskId(runId: string, step: number, node: string, index: number | null): string {
  return index === null ? `${runId}:${step}:${node}` : `${runId}:${step}:${node}#${index}`;
}

/** The run and step a task id (or a durable call's id, which extends its task's) belongs to. */
export function parseTaskId(id: string): { runId: string; step: number } | undefined {
  const first = id.indexOf(":");
  const second = id.indexOf(":", first + 1);
  const step = id.slice(first + 1, second);
  return first > 0 && second > first && /^\d+$/.test(step) ? { runId: id.slice(0, first), step: Number(step) } : undefined;
}

/** Run ids may not contain ":", which separates them from step numbers in task and checkpoint ids. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** OpenTelemetry-shaped ids: 32 hex characters per run, 16 per task attempt. */
export function traceIdOf(runId: string): string {
  let id = traceIds.get(runId);
  if (id === undefined) {
    // Every event of a run carries its trace id; stores derive it again when they read.
    if (traceIds.size >= 4096) traceIds.clear();
    id = hexDigest(`trace:${runId}`, 32);
    traceIds.set(runId, id);
  }
  return id;
}

const traceIds = new Map<string, string>();

export function spanIdOf(taskId: string, attempt: number): string {
  return hexDigest(`span:${taskId}:${attempt}`, 16);
}
