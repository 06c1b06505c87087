/** How many runs' documents are kept at most (a worker's runs in flight, with room to spare). */
const KEPT = 1_024;

/**
 * The run rows this connection wrote last, kept so that a commit need not read its run back: as
 * this connection wrote them, while no other connection has committed since. Checked at the start
 * of each write transaction, under its lock (`PRAGMA data_version` moves with other connections'
 * commits only), and dropped whole when a transaction is rolled back, since what it wrote is then
 * undone. Kept as JSON text, so that what a commit reads is its own copy, shared with nobody.
 */
export class WrittenRuns {
  private readonly rows = new Map<string, { key: number; doc: string }>();
  private dataVersion: number | undefined;

  constructor(private readonly readDataVersion: () => number) {}

  /** At the start of a write transaction: another connection's commit since the last one makes every row kept stale. */
  begin(): void {
    const version = this.readDataVersion();
    if (version !== this.dataVersion) this.rows.clear();
    this.dataVersion = version;
  }

  rolledBack(): void {
    this.rows.clear();
  }

  get(id: string): { key: number; doc: string } | undefined {
    return this.rows.get(id);
  }

  /** The row as just written or read; `ended` drops it (a run that ended is not committed again soon). */
  set(id: string, key: number, doc: string, ended: boolean): void {
    this.rows.delete(id);
    if (ended) return;
    this.rows.set(id, { key, doc });
    if (this.rows.size > KEPT) this.rows.delete(this.rows.keys().next().value!);
  }

  /** A run saved whose key is not at hand: its new document, if the row is kept. */
  saved(id: string, doc: string, ended: boolean): void {
    const row = this.rows.get(id);
    if (row) this.set(id, row.key, doc, ended);
  }

  forget(id: string): void {
    this.rows.delete(id);
  }
}
