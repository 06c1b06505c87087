import { RawZlib } from "./zlib-stream.js";

/**
 * The store's own documents — a commit's events, a checkpoint's metadata, a task — repeat the
 * same words in every row (event types, field names, node and worker names), so they are stored
 * deflated against a preset dictionary of those words, which shrinks a step's 380-byte batch of
 * events to about 130. A packed document is a BLOB (laid out below); TEXT is JSON as written by
 * earlier releases (or too short to gain), read as it is.
 *
 * The state in checkpoints (deltas and snapshots) is stored as written: reading a checkpoint's
 * state never pays for inflating it, and what a run stores grows with what its nodes write.
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

/**
 * Shorter documents are stored as text: the few dozen bytes deflate saves on them do not pay for
 * a zlib call (~10 µs, most of it the same for any size), and every run writes some (the events
 * of its creation, of each claim, of its first step's start).
 */
const MIN_PACKED_LENGTH = 320;

/**
 * `value` as JSON, deflated when that makes it shorter: [dictionary version, the JSON's length in
 * bytes (unsigned LEB128), deflate data]. Knowing the length, inflating allocates exactly the
 * text's bytes (zlib's default is a 16 KiB buffer per call, garbage a moment later) and a row
 * whose data does not match it is found damaged.
 */
export function packJson(value: unknown): string | Buffer {
  return packText(JSON.stringify(value));
}

/** JSON text, deflated when that makes it shorter (as `packJson`). */
export function packText(text: string): string | Buffer {
  if (text.length < MIN_PACKED_LENGTH) return text;
  const utf8 = Buffer.from(text);
  const header = taggedNumbers(CURRENT, [utf8.length]);
  // Deflate may write up to the input's length in all: filling that, it is no shorter.
  const room = utf8.length - header.length;
  const out = scratch(utf8.length);
  deflaters[CURRENT] ??= new RawZlib("deflate", DEFLATE[CURRENT]!);
  const deflated = deflaters[CURRENT].run(utf8, out, header.length, room);
  if (deflated === room) return text;
  const packed = Buffer.allocUnsafe(header.length + deflated);
  packed.set(header);
  out.copy(packed, header.length, header.length, header.length + deflated);
  return packed;
}

/** One zlib stream per dictionary and direction, made when first needed (zlib-stream.ts). */
const deflaters: RawZlib[] = [];
const inflaters: RawZlib[] = [];

/** A buffer to deflate into or inflate into, reused: what is kept of it is copied out. */
let scratchBuffer = Buffer.alloc(4096);

function scratch(bytes: number): Buffer {
  if (scratchBuffer.length < bytes) scratchBuffer = Buffer.alloc(bytes * 2);
  return scratchBuffer;
}

/**
 * A document stored with its commit's events (schema version 4), which deflates the commit's
 * documents in one call: [255, the events row's seq, the document's index among them], each an
 * unsigned LEB128. 255 is never a dictionary version.
 */
const WITH_EVENTS = 255;

export interface DocReference {
  /** The events row holding the document. */
  seq: number;
  /** Its position in that row's `docs`. */
  index: number;
}

export function docReference({ seq, index }: DocReference): Buffer {
  return taggedNumbers(WITH_EVENTS, [seq, index]);
}

/** Where a stored document is kept, when it is kept with its commit's events. */
export function readDocReference(stored: string | Buffer): DocReference | undefined {
  if (typeof stored === "string" || stored[0] !== WITH_EVENTS) return undefined;
  const seq = readLeb128(stored, 1);
  const index = readLeb128(stored, seq.end);
  return { seq: seq.value, index: index.value };
}

/**
 * A commit's document kept with the other documents of its group transaction (schema version 7),
 * which are deflated together in one call into one row of `blobs`: [254, the blob's id, the
 * document's offset and length in the blob's text], each an unsigned LEB128. 254 is never a
 * dictionary version: a pitwall of version 6 finds such a row unreadable, and says the store was
 * upgraded under it.
 */
const IN_GROUP = 254;

export interface GroupReference {
  blob: number;
  /** Where the document's JSON text starts in the blob's text, in UTF-16 code units. */
  offset: number;
  length: number;
}

export function groupReference({ blob, offset, length }: GroupReference): Buffer {
  return taggedNumbers(IN_GROUP, [blob, offset, length]);
}

/** Where a stored document is kept, when it is kept with its group transaction's. */
export function readGroupReference(stored: string | Buffer): GroupReference | undefined {
  if (typeof stored === "string" || stored[0] !== IN_GROUP) return undefined;
  const blob = readLeb128(stored, 1);
  const offset = readLeb128(stored, blob.end);
  const length = readLeb128(stored, offset.end);
  return { blob: blob.value, offset: offset.value, length: length.value };
}

/** A document stored by `packJson` (or as plain JSON text), parsed. */
export function unpackJson<T>(stored: string | Buffer): T {
  return JSON.parse(unpackText(stored)) as T;
}

/** A document stored by `packJson` (or as plain JSON text), as JSON text. */
export function unpackText(stored: string | Buffer): string {
  if (typeof stored === "string") return stored;
  const version = stored[0]!;
  const options = INFLATE[version];
  // A damaged row surfaces as the same SyntaxError as damaged JSON text, which the store reports.
  if (!options) throw new SyntaxError(`packed with unknown dictionary ${version}`);
  const { value: bytes, end } = readLeb128(stored, 1);
  // Room for one byte more than recorded, to notice a row that inflates to more.
  const out = scratch(bytes + 1);
  let inflated: number;
  try {
    inflaters[version] ??= new RawZlib("inflate", options);
    inflated = inflaters[version].run(stored.subarray(end), out, 0, bytes + 1);
  } catch (error) {
    throw new SyntaxError(`packed record does not inflate (${(error as Error).message})`);
  }
  if (inflated !== bytes) throw new SyntaxError(`packed record inflates to ${inflated > bytes ? "more than" : inflated} bytes, not the ${bytes} it records`);
  return out.toString("utf8", 0, bytes);
}

/** A byte, then each of `values` as an unsigned LEB128. */
function taggedNumbers(tag: number, values: readonly number[]): Buffer {
  let size = 1;
  for (let n of values) {
    do {
      size++;
      n = Math.floor(n / 128);
    } while (n > 0);
  }
  const out = Buffer.allocUnsafe(size);
  out[0] = tag;
  let at = 1;
  for (let n of values) {
    do {
      const low = n % 128;
      n = Math.floor(n / 128);
      out[at++] = n > 0 ? low | 128 : low;
    } while (n > 0);
  }
  return out;
}

function readLeb128(buffer: Buffer, start: number): { value: number; end: number } {
  let value = 0;
  let scale = 1;
  for (let i = start; i < buffer.length && i < start + 8; i++) {
    value += (buffer[i]! & 127) * scale;
    if (buffer[i]! < 128) return { value, end: i + 1 };
    scale *= 128;
  }
  throw new SyntaxError("packed record has no readable length");
}
