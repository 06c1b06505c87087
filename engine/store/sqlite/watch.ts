/**
 * Notices commits made by other processes: SQLite's `PRAGMA data_version` changes when another
 * connection commits. It is polled only while a subscriber waits (the event feed starts and
 * stops the watch), so an idle store costs nothing.
 *
 * The last version seen is kept across watches: a commit that lands while nobody waits is still
 * reported when the next watch starts (at worst one needless re-read), never lost.
 */
export class DataVersionWatch {
  private seen: number;

  constructor(
    private readonly dataVersion: () => number,
    private readonly intervalMs: number,
  ) {
    this.seen = dataVersion();
  }

  readonly watch = (notify: () => void): (() => void) => {
    const timer = setInterval(() => {
      let version: number;
      try {
        version = this.dataVersion();
      } catch {
        return; // The store is closing; the feed stops the watch.
      }
      if (version === this.seen) return;
      this.seen = version;
      notify();
    }, this.intervalMs);
    return () => clearInterval(timer);
  };
}
