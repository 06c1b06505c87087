import { EVENT_TYPES, followRun, outlastingSubscription, readAllEvents, type EventRecord, type EventType, type RunRecord } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { listFlag } from "../cli/inputs.js";
import { describeEvent } from "../text/event-text.js";
import { clock } from "../cli/format.js";
import { mustGetRun } from "../cli/lookup.js";
import { outageNotes } from "../cli/outage-notes.js";


export const events = defineCommand({
  name: "events",
  usage: "events [<run>] [--follow] [--after SEQ] [--type T ...]",
  summary: "the event log, of one run or of the whole store; --follow streams new events",
  details: `--type takes an event type (task.failed) or a family (task, task.*); repeat it for several.
--follow prints new events as they are committed, by any process. Following one run stops
when it ends; following the store starts from now (unless --after) and runs until Ctrl-C.
Lines of one run start with the event's number in the run, then #SEQ, its number in the store
(the one --after takes); the numbers are padded to the widest of the listing (--follow: at least
6 digits), so that the columns after them stay put.
--json prints one event per line: { "seq", "runId", "runSeq", "taskId", "traceId", "spanId",
"type", "actor", "payload", "time" }.`,
  flags: {
    follow: { type: "boolean", shortFlag: "f" },
    after: { type: "number" },
    type: { type: "string", isMultiple: true },
  },
  args: { min: 0, max: 1 },
  readsOnly: true,
  // A listing, however long, ends at Ctrl-C like any short command; a follower stops cleanly.
  stopsOnSignal: (flags) => flags.follow === true,
  async run({ args, flags, out, store, signal }) {
    const types = expandTypes(flags.type ?? []);
    if (flags.after !== undefined && (!Number.isInteger(flags.after) || flags.after < 0)) throw new UsageError("--after must be an event sequence number");
    const s = await store();
    const runId = args[0];
    const wanted = (e: EventRecord) => types === undefined || types.includes(e.type);
    // A reader resuming the store's log from a sequence number is told when what came right after
    // it is gone (trimmed by a Redis store's retention, or deleted with its runs).
    let first = runId === undefined && types === undefined && flags.after !== undefined && flags.after > 0;
    let widths: Widths = { runSeq: 4, seq: 1 };
    const print = (e: EventRecord) => {
      if (first && e.seq > flags.after! + 1) out.note(`events #${flags.after! + 1} to #${e.seq - 1} are no longer in the store (trimmed by its retention, or deleted with their runs): going on from #${e.seq}`);
      first = false;
      return out.json ? out.value(e) : out.line(eventLine(e, runId === undefined, widths));
    };
    // The numbers are padded to the widest they will be (as far as can be known), so that the
    // columns after them do not shift when #SEQ gains a digit; a follower leaves room to grow.
    const padTo = async (run: RunRecord | undefined, follow: boolean) => {
      widths = columnWidths(await s.lastEventSeq(), run?.eventCount ?? 0, follow);
    };

    if (!flags.follow) {
      await padTo(runId !== undefined ? await mustGetRun(s, runId) : undefined, false);
      for await (const e of readAllEvents(s, { after: flags.after ?? 0, ...(runId ? { runId } : {}), ...(types ? { types } : {}) })) print(e);
      return EXIT.ok;
    }
    const follow = async () => {
      await padTo(runId !== undefined ? await mustGetRun(s, runId) : undefined, true);
      const after = flags.after ?? (runId !== undefined ? 0 : await s.lastEventSeq());
      // A store that stops answering for a while (a Redis failover, a file locked by a backup) is
      // waited out, said as it begins and ends: a follower is often left running unattended.
      const onStoreFailure = outageNotes(out, "still following: the events go on from where they stopped once it answers", "following on");
      for await (const e of runId !== undefined ? followRun(s, runId, { after, signal, onStoreFailure }) : outlastingSubscription(s, { after, signal }, onStoreFailure)) {
        if (wanted(e)) print(e);
      }
    };
    await untilAborted(follow(), signal);
    return EXIT.ok;
  },
});

/**
 * `work` (its failure, unless the signal aborted first), or nothing as soon as the signal aborts:
 * Ctrl-C ends a follower at once even while a read waits for a server that has gone away (it is
 * failed when the store closes, after the command).
 */
function untilAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  const ended = work.catch((error: unknown) => {
    if (!signal.aborted) throw error;
  });
  if (signal.aborted) return Promise.resolve();
  return Promise.race([ended, new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }))]);
}

/** `task` and `task.*` stand for every task event; exact names must exist. */
function expandTypes(given: readonly string[]): EventType[] | undefined {
  if (given.length === 0) return undefined;
  const out = new Set<EventType>();
  for (const t of listFlag("type", given)) {
    const family = t.endsWith(".*") ? t.slice(0, -2) : t;
    const matches = EVENT_TYPES.filter((e) => e === t || e.startsWith(`${family}.`));
    if (matches.length === 0) throw new UsageError(`--type ${t}: no such event type (for example ${EVENT_TYPES.slice(0, 4).join(", ")}, or a family like task)`);
    for (const m of matches) out.add(m);
  }
  return [...out];
}

/** How wide the numbers of a listing's lines are; a number wider than expected widens the lines after it. */
interface Widths {
  runSeq: number;
  seq: number;
}

/** A follower's numbers have room for a few digits more than the log has now. */
const FOLLOW_SEQ_WIDTH = 6;

function columnWidths(lastSeq: number, runEvents: number, follow: boolean): Widths {
  const digits = (n: number) => String(n).length;
  return follow
    ? { seq: Math.max(FOLLOW_SEQ_WIDTH, digits(lastSeq) + 1), runSeq: Math.max(4, digits(runEvents) + 1) }
    : { seq: digits(lastSeq), runSeq: Math.max(4, digits(runEvents)) };
}

/**
 * One event: of one run, its number in the run (gap-free, as the console shows it) beside the
 * store's sequence number (which --after takes); of the whole store, that number and the run.
 */
function eventLine(e: EventRecord, withRun: boolean, widths: Widths): string {
  widths.seq = Math.max(widths.seq, String(e.seq).length);
  widths.runSeq = Math.max(widths.runSeq, String(e.runSeq).length);
  const seq = `#${e.seq}`.padEnd(widths.seq + 1);
  const number = withRun ? [seq] : [String(e.runSeq).padStart(widths.runSeq), seq];
  return [...number, clock(e.time), ...(withRun ? [e.runId] : []), e.type.padEnd(18), e.actor, describeEvent(e)].join("  ");
}
