import type { WorkerNotice, WorkerNoticeKind } from "../../engine/index.js";

/**
 * What a worker says (`onNotice`), kept for the test to assert on: a worker without a listener
 * writes its warnings to stderr, where they would be noise no test checks. A test asks for the
 * kinds it expects (`of`); when it ends, `end` writes to stderr the warnings and errors of the
 * kinds it never asked about, so that a notice nobody expected is still seen.
 */
export class NoticeLog {
  private readonly heard: WorkerNotice[] = [];
  private readonly asked = new Set<WorkerNoticeKind>();

  /** The worker's `onNotice`. */
  readonly listen = (notice: WorkerNotice): void => {
    this.heard.push(notice);
  };

  /** The notices of this kind heard so far, in order. */
  of(kind: WorkerNoticeKind): WorkerNotice[] {
    this.asked.add(kind);
    return this.heard.filter((n) => n.kind === kind);
  }

  /** Says what no test asked about (see above), and forgets everything, for the next test. */
  end(): void {
    for (const n of this.heard) if (n.level !== "info" && !this.asked.has(n.kind)) console.warn(`worker notice no test asked about (${n.kind}): ${n.message}`);
    this.heard.length = 0;
    this.asked.clear();
  }
}
