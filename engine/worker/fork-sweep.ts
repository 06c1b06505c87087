import { StoreError, errorMessage } from "../errors.js";
import { answerAbandonedForks } from "../operator/abandoned-forks.js";
import type { CommandRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import { repeatUntil } from "./periodic.js";

/** When a worker first looks for forks their recorders left unanswered, then how often. */
const FIRST_MS = 2_000;
const EVERY_MS = 30_000;

/**
 * Answers, soon after a worker starts and every 30 s, the forks whose recorders stopped before
 * answering them (`answerAbandonedForks`): a fork is answered by the process that makes it, not
 * by the owner of its source run, so without this one would stay pending for ever. Several
 * workers at it answer each fork once (an answer is written only while the command is pending).
 */
export function sweepAbandonedForks(store: Store, actor: string, signal: AbortSignal, notify: (notice: WorkerNotice) => void): void {
  repeatUntil(signal, FIRST_MS, EVERY_MS, async () => {
    try {
      for (const command of await answerAbandonedForks(store, actor)) notify(forkAnsweredNotice(command));
    } catch (error) {
      // The claim loop reports a failing store, once.
      if (!(error instanceof StoreError)) notify({ level: "warn", kind: "fork-answered", message: `answering the forks left by stopped processes failed: ${errorMessage(error)}; trying again later` });
    }
  });
}

/** What a worker says of a fork it answered in the place of its recorder. */
export function forkAnsweredNotice(command: CommandRecord): WorkerNotice {
  const refused = command.status === "refused";
  const what = `fork ${command.id} of run ${command.runId} (by ${command.actor})`;
  return {
    level: refused ? "warn" : "info",
    kind: "fork-answered",
    runId: command.runId,
    message: refused ? `${what} refused: ${String(command.result?.reason)}` : `${what} accepted in the place of its recorder, which stopped after it made run ${String(command.result?.runId)}`,
  };
}
