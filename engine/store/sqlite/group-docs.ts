import { groupReference, packText, readGroupReference, unpackText, type GroupReference } from "./packed-json.js";
import type { Statements } from "./statements.js";
import { TurnCache } from "./turn-cache.js";

/**
 * The documents of the commits of one group transaction (each commit's events, with its
 * checkpoint's metadata and settled tasks), deflated together in one zlib call into one row of
 * `blobs` (schema version 7), which each commit's events row refers to. A commit's own deflate
 * call cost about 9 µs for its ~650 bytes; the dozen commits of a worker's group transaction
 * deflate together in about 4 µs each, and into about half as many bytes, deflate finding the
 * repetitions between them (the same node, worker and field names, the same shapes).
 *
 * A blob counts the events rows referring to it (`refs`): deleting a run's history blanks its
 * documents in the blobs it shared with other runs (spaces of the same length, so that the other
 * rows' offsets hold; with `secure_delete` on, the old row is overwritten) and drops the blobs
 * nobody refers to any more.
 */
export class GroupDocs {
  private texts: string[] = [];
  private length = 0;
  /** Documents gathered for the blob whose run was deleted in the same transaction (blanked). */
  private released = 0;
  /**
   * The id of the blob being gathered: the number of the events row of the group's first
   * document, which is never given again (also once its run is deleted), so that no id is reused
   * while another process may hold the text of a blob it named.
   */
  private blob: number | undefined;
  /** Blobs' texts inflated in this turn of the event loop (a run's rows share them). */
  private readonly inflated = new TurnCache<number, string>();

  constructor(private readonly s: Statements) {}

  /** Keeps a commit's document (JSON text) for its group's blob; returns what its events row (`seq`) stores. */
  add(text: string, seq: number): Buffer {
    this.blob ??= seq;
    const reference = groupReference({ blob: this.blob, offset: this.length, length: text.length });
    this.texts.push(text);
    this.length += text.length;
    return reference;
  }

  /** At the end of a group transaction, inside it: its documents, in one row. */
  end(): void {
    if (this.blob === undefined) return;
    const text = this.texts.join("");
    const refs = this.texts.length - this.released;
    if (refs > 0) this.s.sql("INSERT INTO blobs (id, refs, size, data) VALUES (?, ?, ?, ?)").run(this.blob, refs, text.length, packText(text));
    this.clear();
  }

  /** A group transaction rolled back: what it gathered was never written. */
  clear(): void {
    this.texts = [];
    this.length = 0;
    this.released = 0;
    this.blob = undefined;
  }

  /** A commit's document as JSON text: in its events row (versions 2 to 6), or in its group's blob. */
  text(stored: string | Buffer): string {
    const reference = readGroupReference(stored);
    if (!reference) return unpackText(stored);
    const text = this.blobText(reference.blob);
    const end = reference.offset + reference.length;
    // A damaged reference reads as damaged JSON does: the store reports the file corrupt.
    if (text === undefined || end > text.length) {
      throw new SyntaxError(`an event row refers to characters ${reference.offset} to ${end} of blob ${reference.blob}, which ${text === undefined ? "is missing" : `has ${text.length}`}`);
    }
    return text.slice(reference.offset, end);
  }

  private blobText(blob: number): string | undefined {
    if (blob === this.blob) return this.texts.join("");
    return this.inflated.get(blob, () => {
      const data = this.s.sql("SELECT data FROM blobs WHERE id = ?").pluck().get(blob) as string | Buffer | undefined;
      return data === undefined ? undefined : unpackText(data);
    });
  }

  /**
   * Bytes of the blobs that these stored documents (a run's events rows) hold: each document's
   * share of its blob's stored bytes, by length.
   */
  share(stored: readonly (string | Buffer)[]): number {
    const references = stored.map(readGroupReference).filter((r) => r !== undefined);
    if (references.length === 0) return 0;
    const blobs = new Map(
      (
        this.s.sql("SELECT id, octet_length(data) AS bytes, size FROM blobs WHERE id IN (SELECT value FROM json_each(?))").all(JSON.stringify([...new Set(references.map((r) => r.blob))])) as {
          id: number;
          bytes: number;
          size: number;
        }[]
      ).map((b) => [b.id, b]),
    );
    let bytes = 0;
    for (const r of references) {
      const blob = blobs.get(r.blob);
      if (blob && blob.size > 0) bytes += (blob.bytes * r.length) / blob.size;
    }
    return Math.round(bytes);
  }

  /** Before a run's events rows are deleted: their documents leave their blobs (see the class). */
  release(stored: readonly (string | Buffer)[]): void {
    const byBlob = new Map<number, GroupReference[]>();
    for (const reference of stored.map(readGroupReference)) {
      if (reference) byBlob.set(reference.blob, [...(byBlob.get(reference.blob) ?? []), reference]);
    }
    for (const [blob, references] of byBlob) {
      if (blob === this.blob) {
        this.releasePending(references);
        continue;
      }
      this.inflated.delete(blob);
      const row = this.s.sql("SELECT refs, data FROM blobs WHERE id = ?").get(blob) as { refs: number; data: string | Buffer } | undefined;
      if (!row) continue;
      if (row.refs <= references.length) {
        this.s.sql("DELETE FROM blobs WHERE id = ?").run(blob);
        continue;
      }
      let text = unpackText(row.data);
      for (const r of references) text = text.slice(0, r.offset) + " ".repeat(r.length) + text.slice(r.offset + r.length);
      this.s.sql("UPDATE blobs SET refs = ?, data = ? WHERE id = ?").run(row.refs - references.length, packText(text), blob);
    }
  }

  /** A run that ended and was deleted in the transaction under way leaves the blob being gathered. */
  private releasePending(references: readonly GroupReference[]): void {
    let offset = 0;
    this.texts = this.texts.map((text) => {
      const released = references.some((r) => r.offset === offset);
      offset += text.length;
      return released ? " ".repeat(text.length) : text;
    });
    this.released += references.length;
  }
}
