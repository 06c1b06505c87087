import type { RunRecord } from "../records.js";

/** How many runs' documents are kept at most (a worker's runs in flight, with room to spare). */
const KEPT = 1_024;

/**
 * The run rows this connection wrote last, kept so that a commit need not read its run back: as
 * this connection wrote them, while no other connection has committed since. Checked at the start
 * of each write transaction, under its lock (`PRAGMA data_version` moves with other connections'
 * commits only), and dropped whole when a transaction is rolled back, since what it wrote is then
 * undone. Kept as the record itself, which the write that reads it may change and saves (or, when
 * it fails, its transaction is rolled back and every record kept dropped): a record that leaves
 * the store is a copy (a claim's run).
 */
export class WrittenRuns {
  private readonly rows = new Map<string, KeptRun>();
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

  get(id: string): KeptRun | undefined {
    return this.rows.get(id);
  }

  /** The row as just written or read; `ended` drops it (a run that ended is not committed again soon). */
  set(id: string, key: number, run: RunRecord, ended: boolean): void {
    if (ended) {
      this.rows.delete(id);
      return;
    }
    const row = this.rows.get(id);
    if (row) {
      // Kept where it was: the runs dropped first when too many are kept are the oldest taken.
      row.key = key;
      row.run = run;
      return;
    }
    this.rows.set(id, { key, run });
    if (this.rows.size > KEPT) this.rows.delete(this.rows.keys().next().value!);
  }

  /** A run saved whose key is not at hand: its new record, if the row is kept. */
  saved(id: string, run: RunRecord, ended: boolean): void {
    const row = this.rows.get(id);
    if (row) this.set(id, row.key, run, ended);
  }

  forget(id: string): void {
    this.rows.delete(id);
  }
}

interface KeptRun {
  key: number;
  run: RunRecord;
}
