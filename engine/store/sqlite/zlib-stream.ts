import { constants, createDeflateRaw, createInflateRaw, deflateRawSync, inflateRawSync, type ZlibOptions } from "node:zlib";

/** zlib's stream as node:zlib's synchronous calls drive it (`_handle`, `_writeState`). */
interface ZlibHandle {
  reset(): void;
  writeSync(flush: number, input: Uint8Array, inOffset: number, inLength: number, output: Uint8Array, outOffset: number, outLength: number): void;
  onerror: (message: string) => void;
}

/**
 * Raw deflate or inflate of short documents, one after the other through the same zlib stream,
 * reset between them. node:zlib's synchronous calls build a stream (a Node Transform, a native
 * zlib state, its dictionary) for every call and free it after: for the store's documents of a
 * few hundred bytes that was most of what packing or unpacking one cost, and much of a commit's
 * garbage. The stream is driven as those calls drive it, through its handle; an error (damaged
 * data) is taken from the handle instead of destroying the stream, and the next reset starts
 * afresh. On a Node without those internals, each call builds its own stream as before: the
 * same bytes either way.
 */
export class RawZlib {
  private readonly handle: ZlibHandle | undefined;
  private readonly state: Uint32Array | undefined;
  private failure: string | undefined;

  constructor(
    private readonly mode: "deflate" | "inflate",
    private readonly options: ZlibOptions,
  ) {
    const stream = (mode === "deflate" ? createDeflateRaw(options) : createInflateRaw(options)) as unknown as { _handle?: Partial<ZlibHandle>; _writeState?: unknown };
    const handle = stream._handle;
    if (typeof handle?.writeSync === "function" && typeof handle.reset === "function" && stream._writeState instanceof Uint32Array) {
      handle.onerror = (message: string) => (this.failure = message);
      this.handle = handle as ZlibHandle;
      this.state = stream._writeState;
      // Internals are not a contract: a Node whose handle behaves otherwise than the public calls
      // (twice, to cover the reset) is not driven this way, so no store ever holds other bytes.
      if (!this.agreesWithPublicCalls() || !this.agreesWithPublicCalls()) [this.handle, this.state] = [undefined, undefined];
    }
  }

  private agreesWithPublicCalls(): boolean {
    const text = Buffer.from(JSON.stringify({ probe: "pitwall", at: Array.from({ length: 40 }, (_, i) => i * 7919) }));
    const input = this.mode === "deflate" ? text : deflateRawSync(text, this.options);
    const expected = this.mode === "deflate" ? deflateRawSync(text, this.options) : inflateRawSync(input, this.options);
    const output = Buffer.alloc(expected.length + 64);
    try {
      const written = this.run(input, output, 0, output.length);
      return written === expected.length && output.subarray(0, written).equals(expected);
    } catch {
      return false;
    }
  }

  /**
   * Runs `input` through zlib from a fresh start to its end into `output` from `offset`, writing
   * at most `room` bytes; returns how many it wrote (`room`: the output may have been cut
   * short). Damaged input throws zlib's error.
   */
  run(input: Uint8Array, output: Buffer, offset: number, room: number): number {
    if (!this.handle || !this.state) return this.runOnce(input, output, offset, room);
    this.failure = undefined;
    this.handle.reset();
    this.handle.writeSync(constants.Z_FINISH, input, 0, input.length, output, offset, room);
    if (this.failure !== undefined) throw new Error(this.failure);
    return room - this.state[0]!;
  }

  private runOnce(input: Uint8Array, output: Buffer, offset: number, room: number): number {
    let result: Buffer;
    try {
      result =
        this.mode === "deflate"
          ? deflateRawSync(input, { ...this.options, chunkSize: Math.max(64, room + 64) })
          : inflateRawSync(input, { ...this.options, chunkSize: Math.max(64, room + 8), maxOutputLength: Math.max(1, room) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return room;
      throw error;
    }
    return result.copy(output, offset, 0, Math.min(result.length, room));
  }
}
