import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * The store's own documents — a commit's events, a checkpoint's metadata, a task — repeat the
 * same words in every row (event types, field names, node and worker names), so they are stored
 * deflated against a preset dictionary of those words, which shrinks a 400-byte batch of events
 * to about 160. A packed document is a BLOB whose first byte names the dictionary it was packed
 * with; TEXT is JSON as written by earlier releases (or too short to gain), read as it is.
 *
 * State values (deltas and snapshots) are stored as written: reading a checkpoint's state then
 * never pays for inflating it, and what a run stores grows with what its nodes write.
 */

/**
 * Indexed by the version byte. Entries are never edited once released (packed rows name them):
 * a better dictionary is a new entry. The most frequent words come last, where deflate reaches
 * them with the shortest distances.
 */
const DICTIONARIES: readonly Buffer[] = [
  Buffer.from(
    [
      '"run.created","run.claimed","run.released","run.paused","run.resumed","run.succeeded","run.failed","run.canceled",',
      '"interrupt.created","interrupt.resolved","state.edited","operator.requested","operator.accepted","operator.refused",',
      '"node.progress","node.log","task.scheduled","task.interrupted","task.canceled","task.failed",',
      '{"message":"","name":"Error","code":"TIMEOUT","code":"WORKER_LOST","stack":"Error: ","notBefore":"waitingFor":"writes":[["","route":"","index":"input":"parent":"call":"output":',
      '"reason":"worker lost","owner":"lease":"fence":"interruptId":"question":"edits":"commandId":',
      '{"status":"queued","status":"running","status":"failed","status":"interrupted","attempts":[{"outcome":"failed","error":"","code":"',
      '"source":"fork","source":"edit","parentId":"control":{"finished":[],"barriers":{"',
      '{"status":"succeeded","attempts":[{}],"worker":"","startedAt":17,"endedAt":17',
      '{"actor":"worker:","nodes":[""],"next":[""],"control":{"finished":[{"node":""}],"visits":{"":1}},"createdAt":17',
      '{"actor":"worker:","time":17,"events":[["task.succeeded",{"node":"","attempt":1,"durationMs":0,"keys":[""]},":1:","',
      '"],["step.completed",{"step":1,"checkpointId":"run-:1","nodes":[""],"keys":[""],"next":[""]}],["task.started",{"node":"","attempt":1},":2:","',
    ].join(""),
  ),
];

const CURRENT = DICTIONARIES.length - 1;
/**
 * A 2 KiB window holds the dictionary and reaches across any document's repetitions; it and a
 * small hash table keep each call's zlib state to a few KiB instead of a quarter MiB.
 */
const WINDOW_BITS = 11;
const DEFLATE = DICTIONARIES.map((dictionary) => ({ dictionary, windowBits: WINDOW_BITS, memLevel: 4 }));
const INFLATE = DICTIONARIES.map((dictionary) => ({ dictionary, windowBits: WINDOW_BITS }));

/** Shorter documents are stored as text: deflate's few bytes of framing would eat what it saves. */
const MIN_PACKED_LENGTH = 48;

/** `value` as JSON, deflated when that makes it shorter. */
export function packJson(value: unknown): string | Buffer {
  const text = JSON.stringify(value);
  if (text.length < MIN_PACKED_LENGTH) return text;
  const deflated = deflateRawSync(text, DEFLATE[CURRENT]);
  if (deflated.length + 1 >= Buffer.byteLength(text)) return text;
  const packed = Buffer.allocUnsafe(deflated.length + 1);
  packed[0] = CURRENT;
  deflated.copy(packed, 1);
  return packed;
}

/** A document stored by `packJson` (or as plain JSON text), parsed. */
export function unpackJson<T>(stored: string | Buffer): T {
  if (typeof stored === "string") return JSON.parse(stored) as T;
  const options = INFLATE[stored[0]!];
  // A damaged row surfaces as the same SyntaxError as damaged JSON text, which the store reports.
  if (!options) throw new SyntaxError(`packed with unknown dictionary ${stored[0]}`);
  let text: string;
  try {
    text = inflateRawSync(stored.subarray(1), options).toString("utf8");
  } catch (error) {
    throw new SyntaxError(`packed record does not inflate (${(error as Error).message})`);
  }
  return JSON.parse(text) as T;
}
