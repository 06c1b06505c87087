import type { WorkerNotice, WorkerNoticeKind } from "../../engine/index.js";

/**
 * What a worker says (`onNotice`), kept for the test to assert on: a worker without a listener
 * writes its warnings to stderr, where they would be noise no test checks. A test asks for the
 * kinds it expects (`of`); `unasked` are the warnings and errors of the kinds it never asked
 * about, which a harness can show, so that a notice nobody expected is still seen.
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

  unasked(): WorkerNotice[] {
    return this.heard.filter((n) => n.level !== "info" && !this.asked.has(n.kind));
  }

  clear(): void {
    this.heard.length = 0;
    this.asked.clear();
  }
}
