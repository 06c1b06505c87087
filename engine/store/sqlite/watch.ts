import type { ChangeWatch } from "../event-feed.js";

/**
 * Notices commits made by other processes: SQLite's `PRAGMA data_version` changes when another
 * connection commits. The event feed asks only while a subscriber waits, so an idle store costs
 * nothing.
 *
 * The last version seen is kept between watches: a commit that lands while nobody waits is still
 * reported when the feed next asks (at worst one needless re-read), never lost.
 */
export class DataVersionWatch implements ChangeWatch {
  private seen: number;

  constructor(
    private readonly dataVersion: () => number,
    readonly everyMs: number,
  ) {
    this.seen = dataVersion();
  }

  changed(): boolean {
    let version: number;
    try {
      version = this.dataVersion();
    } catch {
      return false; // The store is closing; the feed stops asking.
    }
    if (version === this.seen) return false;
    this.seen = version;
    return true;
  }
}
