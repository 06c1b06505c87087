import { ConflictError, NotFoundError, PitwallError } from "../errors.js";
import { derivedId } from "../ids.js";
import { processGone } from "../local-process.js";
import type { CommandRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { acceptance, refusal } from "../worker/commands.js";
import { forkEffect, forkResult, subWorkflowNote } from "./fork.js";

/**
 * How long the process that records a fork has to make its run before another process may
 * answer the fork in its place, when it cannot tell that process is gone. Making the run takes a
 * few reads and one write; a recorder slower than this (its store unreachable for minutes) finds
 * its fork answered, and makes no run: its run and its answer are one write, made only while the
 * fork is pending (`NewRun.answering`), so a late recorder and the process answering in its
 * place never both succeed. The bound decides only when a silent recorder is given up on.
 */
export const FORK_ANSWER_MS = 2 * 60_000;

/**
 * Why a pending fork will not be answered by the process that recorded it, or undefined while
 * that process may still answer it: it is demonstrably gone (it ran on this host, and no process
 * has its id now, or this process has its id and started after the fork was recorded), or the
 * fork has waited longer than `FORK_ANSWER_MS`. A recorder whose id was taken by a new process
 * counts as alive until the bound.
 */
export function abandonedWhy(command: Pick<CommandRecord, "createdAt" | "recorder">, now: number): string | undefined {
  const by = command.recorder;
  const recorder = `the process that recorded it${by ? ` (pid ${by.pid} on ${by.host})` : ""}`;
  if (by && processGone(by, command.createdAt)) {
    return `${recorder} stopped before it made the run`;
  }
  if (now - command.createdAt > FORK_ANSWER_MS) return `${recorder} did not make the run within ${FORK_ANSWER_MS / 60_000} minutes (it stopped, or lost the store)`;
  return undefined;
}

/**
 * Answers the pending forks (`fork` commands, continuations among them) whose recorders will not
 * (`abandonedWhy`), as `actor`: accepted with the run's id when their run was made (a recorder
 * of a pitwall that made the run before answering, stopped in between), refused with the reason
 * otherwise. Returns them as answered; one its recorder answered meanwhile is left out.
 */
export async function answerAbandonedForks(store: Store, actor: string, now = Date.now()): Promise<CommandRecord[]> {
  const answered: CommandRecord[] = [];
  for (const command of await store.listCommands({ status: "pending" })) {
    if (command.type !== "fork") continue;
    const why = abandonedWhy(command, now);
    if (why === undefined) continue;
    const runId = derivedId("run", command.id);
    const reply = (await store.getRun(runId))
      ? acceptance(command, forkEffect(command, runId, await subWorkflowNote(store, await store.getRun(command.runId))), forkResult(command, runId), actor)
      : refusal(command, new PitwallError("RUN", `no run was made from checkpoint ${String(command.args.checkpointId)}: ${why}; fork again`), actor);
    try {
      await store.answerCommand(reply.answer, reply.event);
      answered.push({ ...command, ...reply.answer });
    } catch (error) {
      // Answered by its recorder after all, or deleted with its run.
      if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    }
  }
  return answered;
}
