import { RUN_STATUSES, currentStep, runsAtOnceOf, selectRuns, unclaimedWhy, type RunRecord, type RunsAtOnce } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, countFlag } from "../cli/errors.js";
import { SELECTION_FLAGS, SELECTION_USAGE, selectionOf } from "../cli/run-selection.js";
import { age, retryWaitOf, runStatus } from "../cli/format.js";
import { noteRoom } from "../cli/room.js";

export const runs = defineCommand({
  name: "runs",
  usage: `runs ${SELECTION_USAGE} [--limit N]`,
  summary: "list runs, most recently updated first",
  details: `--status takes ${RUN_STATUSES.join(", ")} (repeat it or separate with commas); so does
--workflow, the runs of any of the workflows named, and --version PREFIX, the runs on any of the
versions that start so (at least 4 hex characters, as the VERSION column prints them: an upgrade
moves a run to another version). --tag NAME=VALUE (repeated) lists the runs tagged with each
(start --tag).
At most --limit runs (default 50) are listed; a note on stderr says when there are more.
--orphaned lists the running runs whose lease ran out: their worker is gone or stalled, and no
worker has taken them over yet.
--descendants-of RUN lists the runs made from RUN: its forks and the runs that went on from it
(start --from), of it and of its child runs, and theirs in turn (what delete --with-descendants
deletes with it); the other filters narrow them.
--json prints a JSON array of run records (id, workflow, version, status, reason, error,
step, current, pendingInterrupts, parentRunId, forkOf, createdAt, updatedAt, ...).`,
  flags: { ...SELECTION_FLAGS, limit: { type: "number" } },
  args: { min: 0, max: 0 },
  readsOnly: true,
  async run({ flags, out, store }) {
    const selection = selectionOf(flags);
    const limit = countFlag("limit", flags.limit) ?? 50;
    const s = await store();
    await noteRoom(s, out);
    const { runs: list, more } = await selectRuns(s, selection, limit);
    // A list cut at the limit says so (on stderr, so that --json stays one array).
    if (more) out.note(`showing the ${limit} most recently updated; there are more (--limit N shows more)`);
    // A queued run parked until a time may wait out a failed node's backoff, not a timer: say which.
    const retries = new Map(out.json ? [] : await Promise.all(list.filter((r) => r.status === "queued" && r.wakeAt !== null).map(async (r) => [r.id, await retryWaitOf(s, r)] as const)));
    // A queued run its workflow's limits.runsAtOnce holds back says so (the rule `show` follows).
    const atOnce = out.json ? new Map<string, RunsAtOnce>() : await runsAtOnceOf(s, list.filter((r) => r.status === "queued").map((r) => r.workflow));
    const now = Date.now();
    const status = (r: RunRecord) => {
      const hold = atOnce.get(r.workflow);
      const held = hold && hold.running >= hold.limit ? unclaimedWhy(r, now, undefined, hold) : undefined;
      return held ? `queued (${held})` : runStatus(r, retries.get(r.id), now);
    };
    await out.list(list, "no runs", ["RUN", "WORKFLOW", "VERSION", "STATUS", "STEP", "NODES", "WAITING", "UPDATED"], (r) => [
      r.id,
      r.workflow,
      // Runs keep the version they started on: which one tells apart runs of an edited workflow.
      r.version.slice(0, 8),
      status(r),
      String(currentStep(r)),
      r.current.join(",") || "-",
      r.pendingInterrupts > 0 ? String(r.pendingInterrupts) : "-",
      age(r.updatedAt),
    ]);
    return EXIT.ok;
  },
});

