import { ConflictError, NotFoundError, StaleFenceError, StoreError } from "../../errors.js";
import { numberedEvent, type CheckpointRecord, type CommandAnswer, type EventRecord, type InterruptRecord, type NewEvent, type RunStatus } from "../records.js";
import { alreadyAnswered, alreadyResolved, checkpointGap, headMoved, missingInterrupt, unexpectedStatus } from "../rules.js";
import type { Commit } from "../store.js";
import type { ScriptArgs, ScriptReply } from "./lua/scripts.js";
import { encodeRunFields } from "./run-codec.js";

/** The arguments of the commit script (see `lua/commit.ts`). */
export function commitArgs(args: ScriptArgs, commit: Commit): ScriptArgs {
  const change = encodeRunFields(commit.run ?? {});
  return args
    .add(commit.id, commit.runId, commit.fence, commit.fenceOut ? 1 : 0)
    .optional(commit.expectHead)
    .strings(commit.expectStatus)
    .strings(commit.expectPending ?? [])
    .tuples(change.set, (pair) => pair)
    .strings(change.del)
    .tuples(commit.checkpoint ? [commit.checkpoint] : [], checkpointRow)
    .tuples(commit.tasks ?? [], (t) => [t.id, t.runId, t.step, JSON.stringify(t)])
    .tuples(commit.interrupts ?? [], (i) => [i.id, i.runId, i.status, i.createdAt, JSON.stringify(i), i.deadline?.at ?? ""])
    .tuples(commit.submit ?? [], (c) => [c.id, c.createdAt, JSON.stringify(c)])
    .tuples(commit.commands ?? [], (a) => [a.id, a.status, JSON.stringify(a)])
    .strings((commit.events ?? []).map((e) => JSON.stringify(e)))
    .strings(commit.wake ?? []);
}

export function checkpointRow(checkpoint: CheckpointRecord): (string | number)[] {
  return [checkpoint.id, checkpoint.n, checkpoint.step, checkpoint.bytes, JSON.stringify(checkpoint)];
}

/** The committed events, numbered as the script numbered them (`{seq, runSeq, ...}`). */
export function numbered(events: readonly NewEvent[], numbers: unknown): EventRecord[] {
  const list = numbers as number[];
  return events.map((event, i) => numberedEvent(event, list[2 * i]!, list[2 * i + 1]!));
}

/** What a refused script call means, as the typed error the memory store would throw. */
export function refusal(reply: ScriptReply, commit?: Commit): Error {
  const [status, ...rest] = reply;
  const text = (i: number) => String(rest[i] ?? "");
  const runId = commit?.runId ?? "";
  switch (status) {
    case "notfound":
      return new NotFoundError(text(0), text(1));
    case "stale":
      return new StaleFenceError(runId, commit?.fence ?? 0, Number(text(0)));
    case "head":
      return headMoved(runId, text(0) || null, commit?.expectHead ?? null);
    case "status":
      return unexpectedStatus(runId, text(0) as RunStatus, commit?.expectStatus ?? []);
    case "missing-interrupt":
      return missingInterrupt(text(0));
    case "resolved":
      return alreadyResolved(text(0), (JSON.parse(text(1)) as InterruptRecord).resolution);
    case "gap":
      return checkpointGap(runId, commit?.checkpoint?.n ?? 0, Number(text(0)));
    case "command-exists":
      return new ConflictError(`command ${text(0)} already exists`);
    case "answered":
      return alreadyAnswered(text(0), (JSON.parse(text(1)) as CommandAnswer).status);
    default:
      return new StoreError(`unexpected reply from Redis: ${JSON.stringify(reply)}`);
  }
}
