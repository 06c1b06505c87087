import { errorMessage } from "../errors.js";

/** How often a failure that goes on is said again. */
const REPEAT_MS = 60_000;

/**
 * Says that something the worker does over and over (claiming runs) fails: once when it starts,
 * at most once a minute while it goes on, with how long it has, and once when it works again. A
 * store that fails at once (a full disk, a write error) would otherwise print a line each poll.
 */
export class FailureReport {
  private since: number | undefined;
  private toldAt = 0;

  constructor(
    private readonly what: string,
    /** `failing`: it failed (again); otherwise it works again. */
    private readonly say: (message: string, failing: boolean) => void,
  ) {}

  failed(error: unknown): void {
    const now = Date.now();
    if (this.since === undefined) {
      this.since = this.toldAt = now;
      this.say(`${this.what} failed: ${errorMessage(error)}; trying again (said again each minute it goes on)`, true);
    } else if (now - this.toldAt >= REPEAT_MS) {
      this.toldAt = now;
      this.say(`${this.what} still failing after ${lasted(now - this.since)}: ${errorMessage(error)}`, true);
    }
  }

  succeeded(): void {
    if (this.since === undefined) return;
    this.say(`${this.what} works again, after failing for ${lasted(Date.now() - this.since)}`, false);
    this.since = undefined;
  }
}

function lasted(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}
