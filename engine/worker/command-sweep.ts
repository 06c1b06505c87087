import { StoreError, errorMessage } from "../errors.js";
import { answerAbandonedForks } from "../operator/abandoned-forks.js";
import { answerLeftCommands } from "../operator/left-commands.js";
import type { CommandRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import { repeatUntil } from "./periodic.js";

/** When a worker first looks for commands left unanswered, then how often. */
const FIRST_MS = 2_000;
const EVERY_MS = 30_000;

/**
 * Answers, soon after a worker starts and every 30 s, the commands nobody else will: forks whose
 * recorders stopped before answering them (`answerAbandonedForks`), and commands left pending on
 * runs nobody holds (`answerLeftCommands`). Without this, each would stay pending for ever.
 * Several workers at it answer each command once (an answer is written only while it is pending).
 */
export function sweepUnansweredCommands(store: Store, actor: string, secretKeys: readonly string[], signal: AbortSignal, notify: (notice: WorkerNotice) => void): void {
  repeatUntil(signal, FIRST_MS, EVERY_MS, async () => {
    try {
      for (const notice of await answerUnansweredCommands(store, actor, secretKeys)) notify(notice);
    } catch (error) {
      // The claim loop reports a failing store, once.
      if (!(error instanceof StoreError)) notify({ level: "warn", kind: "command-answered", message: `answering the commands left unanswered failed: ${errorMessage(error)}; trying again later` });
    }
  });
}

/** What a worker does every 30 s (and `pitwall worker --once` before it exits): the commands it answered, as it says them. */
export async function answerUnansweredCommands(store: Store, actor: string, secretKeys: readonly string[]): Promise<WorkerNotice[]> {
  const forks = await answerAbandonedForks(store, actor);
  const left = await answerLeftCommands(store, actor, { secretKeys });
  return [...forks, ...left].map(answeredNotice);
}

/** What a worker says of a command it answered in the place of the process that recorded it. */
function answeredNotice(command: CommandRecord): WorkerNotice {
  const refused = command.status === "refused";
  const what = `${command.type} ${command.id} of run ${command.runId} (by ${command.actor})`;
  if (command.type === "fork") {
    return {
      level: refused ? "warn" : "info",
      kind: "fork-answered",
      runId: command.runId,
      message: refused ? `${what} refused: ${String(command.result?.reason)}` : `${what} accepted in the place of its recorder, which stopped after it made run ${String(command.result?.runId)}`,
    };
  }
  return {
    level: refused ? "warn" : "info",
    kind: "command-answered",
    runId: command.runId,
    message: `${what}, left unanswered, ${refused ? `refused: ${String(command.result?.reason)}` : `applied: ${String(command.result?.effect)}`}`,
  };
}
