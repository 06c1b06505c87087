import { ConflictError, PitwallError, ValidationError } from "../errors.js";
import { newId } from "../ids.js";
import { thisProcess } from "../local-process.js";
import { EventFactory } from "../runtime/event-factory.js";
import { MAX_DEPTH, checkValue } from "../state/limits.js";
import type { CommandRecord, CommandType } from "../store/records.js";
import type { Store } from "../store/store.js";
import { refusal } from "../worker/commands.js";

/** What an accepted command did: its effect in words, and what it made (`result`, e.g. a fork's `runId`). */
export interface CommandOutcome<R extends Record<string, unknown> = Record<string, unknown>> {
  command: CommandRecord;
  effect: string;
  result: R;
}

/** Who writes an operator's commands and their answers, and the secrets their events never hold. */
export interface CommandWriter {
  readonly store: Store;
  readonly actor: string;
  readonly secretKeys: readonly string[];
}

/**
 * A command as it is first stored: pending, unanswered, naming this process, so that should it
 * stop before the command is answered, another process tells that it is gone (abandoned-forks.ts,
 * left-commands.ts).
 */
export function newCommand(writer: CommandWriter, runId: string, type: CommandType, args: Record<string, unknown>, reason: string | undefined): CommandRecord {
  return {
    id: newId("cmd"),
    runId,
    type,
    args,
    actor: writer.actor,
    reason: reason ?? null,
    createdAt: Date.now(),
    status: "pending",
    result: null,
    answeredAt: null,
    recorder: thisProcess(),
  };
}

/** Stores a command for the run's owner; returns the number of its `operator.requested` event. */
export async function recordCommand(writer: CommandWriter, command: CommandRecord): Promise<number> {
  const { events } = await writer.store.submitCommand(command, requested(command, writer.secretKeys));
  return events[0]?.seq ?? 0;
}

export async function refuseCommand(writer: CommandWriter, command: CommandRecord, error: unknown): Promise<void> {
  const answer = refusal(command, error, writer.actor);
  await writer.store.answerCommand(answer.answer, answer.event);
}

/** A refused command, answered by whichever process applied it, raised here as its typed error. */
export function outcomeOf(command: Pick<CommandRecord, "status" | "result"> & CommandRecord): CommandOutcome {
  if (command.status === "refused") {
    const reason = String(command.result?.reason ?? "refused");
    switch (command.result?.code) {
      case "CONFLICT":
        throw new ConflictError(reason);
      case "NOT_FOUND":
        throw new PitwallError("NOT_FOUND", reason);
      case "VALIDATION":
        throw new ValidationError(reason, (command.result?.issues as ValidationError["issues"] | undefined) ?? []);
      default:
        throw new PitwallError("RUN", reason);
    }
  }
  return { command, effect: String(command.result?.effect ?? ""), result: command.result ?? {} };
}

/** The audit event of a command, stored with it. */
export function requested(command: CommandRecord, secretKeys: readonly string[]) {
  const { id, type, args, reason } = command;
  return new EventFactory(command.runId, command.actor, secretKeys).run("operator.requested", { commandId: id, command: type, args, ...(reason ? { reason } : {}) });
}

/**
 * A patch or a response, checked before the command that carries it is stored: one nested
 * thousands of levels deep would overflow the stack of the write that records it. A patch nests
 * its values in operations (`[{ "value": ... }]`), a few levels more than the state it edits;
 * the edited state is checked exactly when the patch is applied.
 */
export function checkArgs(args: { patch?: unknown; response?: unknown }): void {
  if (args.patch !== undefined) checkValue(args.patch, "the patch", MAX_DEPTH + 2);
  if (args.response !== undefined) checkValue(args.response, "the response");
}
