import { constants, createDeflateRaw, deflateRawSync, inflateRawSync, type ZlibOptions } from "node:zlib";

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
  const text = JSON.stringify(value);
  if (text.length < MIN_PACKED_LENGTH) return text;
  const utf8 = Buffer.from(text);
  return deflater().pack(utf8, [CURRENT, ...leb128(utf8.length)]) ?? text;
}

let current: Deflater | undefined;

function deflater(): Deflater {
  current ??= new Deflater(DEFLATE[CURRENT]!);
  return current;
}

/** zlib's stream as node:zlib's synchronous calls drive it (`_handle`, `_writeState`). */
interface ZlibHandle {
  reset(): void;
  writeSync(flush: number, input: Uint8Array, inOffset: number, inLength: number, output: Uint8Array, outOffset: number, outLength: number): void;
}

/**
 * Deflates documents one after the other with the same zlib stream, reset between them.
 * `deflateRawSync` builds a stream (a Node Transform, a native zlib state, its dictionary) for
 * every call and frees it after: that, not compressing a few hundred bytes, was most of a
 * commit's packing cost, and a good share of its garbage. The stream is driven the way
 * node:zlib's own synchronous calls drive it; on a Node without those internals, each document
 * gets `deflateRawSync` as before (the same bytes).
 */
class Deflater {
  private readonly handle: ZlibHandle | undefined;
  private readonly state: Uint32Array | undefined;
  private error: Error | undefined;
  private out = Buffer.alloc(4096);

  constructor(private readonly options: ZlibOptions) {
    const stream = createDeflateRaw(options) as unknown as { _handle?: ZlibHandle; _writeState?: Uint32Array; on(event: "error", listener: (error: Error) => void): void };
    stream.on("error", (error) => (this.error = error));
    if (typeof stream._handle?.writeSync === "function" && typeof stream._handle.reset === "function" && stream._writeState instanceof Uint32Array) {
      this.handle = stream._handle;
      this.state = stream._writeState;
    }
  }

  /** `header` then `input` deflated, when that is shorter than `input`; else undefined. */
  pack(input: Buffer, header: readonly number[]): Buffer | undefined {
    if (!this.handle || !this.state) return this.packOnce(input, header);
    // Deflate may write up to the input's length in all: filling that, it is no shorter.
    const room = input.length - header.length;
    if (this.out.length < input.length) this.out = Buffer.alloc(input.length * 2);
    this.error = undefined;
    this.handle.reset();
    this.handle.writeSync(constants.Z_FINISH, input, 0, input.length, this.out, header.length, room);
    if (this.error) throw this.error;
    const deflated = room - this.state[0]!;
    if (deflated === room) return undefined;
    const packed = Buffer.allocUnsafe(header.length + deflated);
    packed.set(header);
    this.out.copy(packed, header.length, header.length, header.length + deflated);
    return packed;
  }

  private packOnce(input: Buffer, header: readonly number[]): Buffer | undefined {
    const deflated = deflateRawSync(input, { ...this.options, chunkSize: input.length + 64 });
    if (header.length + deflated.length >= input.length) return undefined;
    const packed = Buffer.allocUnsafe(header.length + deflated.length);
    packed.set(header);
    packed.set(deflated, header.length);
    return packed;
  }
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
  return Buffer.from([WITH_EVENTS, ...leb128(seq), ...leb128(index)]);
}

/** Where a stored document is kept, when it is kept with its commit's events. */
export function readDocReference(stored: string | Buffer): DocReference | undefined {
  if (typeof stored === "string" || stored[0] !== WITH_EVENTS) return undefined;
  const seq = readLeb128(stored, 1);
  const index = readLeb128(stored, seq.end);
  return { seq: seq.value, index: index.value };
}

/** A document stored by `packJson` (or as plain JSON text), parsed. */
export function unpackJson<T>(stored: string | Buffer): T {
  return JSON.parse(unpackText(stored)) as T;
}

/** A document stored by `packJson` (or as plain JSON text), as JSON text. */
export function unpackText(stored: string | Buffer): string {
  if (typeof stored === "string") return stored;
  const options = INFLATE[stored[0]!];
  // A damaged row surfaces as the same SyntaxError as damaged JSON text, which the store reports.
  if (!options) throw new SyntaxError(`packed with unknown dictionary ${stored[0]}`);
  const { value: bytes, end } = readLeb128(stored, 1);
  let text: Buffer;
  try {
    text = inflateRawSync(stored.subarray(end), { ...options, chunkSize: Math.max(64, bytes + 8), maxOutputLength: Math.max(1, bytes) });
  } catch (error) {
    throw new SyntaxError(`packed record does not inflate (${(error as Error).message})`);
  }
  if (text.length !== bytes) throw new SyntaxError(`packed record inflates to ${text.length} bytes, not the ${bytes} it records`);
  return text.toString("utf8");
}

function leb128(n: number): number[] {
  const out: number[] = [];
  do {
    const low = n % 128;
    n = Math.floor(n / 128);
    out.push(n > 0 ? low | 128 : low);
  } while (n > 0);
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
