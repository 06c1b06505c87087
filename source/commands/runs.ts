import { RUN_STATUSES, currentStep, hasTags, leaseRanOut, runDescendants, type RunRecord, type RunStatus, type RunTags } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError, countFlag } from "../cli/errors.js";
import { listFlag, tagFlags } from "../cli/inputs.js";
import { age, retryWaitOf, runStatus } from "../cli/format.js";
import { noteRoom } from "../cli/room.js";

export const runs = defineCommand({
  name: "runs",
  usage: "runs [--status S ...] [--orphaned] [--workflow NAME ...] [--tag NAME=VALUE ...] [--limit N] [--descendants-of RUN]",
  summary: "list runs, most recently updated first",
  details: `--status takes ${RUN_STATUSES.join(", ")} (repeat it or separate with commas); so does
--workflow, the runs of any of the workflows named. --tag NAME=VALUE (repeated) lists the runs
tagged with each (start --tag).
At most --limit runs (default 50) are listed; a note on stderr says when there are more.
--orphaned lists the running runs whose lease ran out: their worker is gone or stalled, and no
worker has taken them over yet.
--descendants-of RUN lists the runs made from RUN: its forks and the runs that went on from it
(start --from), of it and of its child runs, and theirs in turn (what delete --with-descendants
deletes with it); the other filters narrow them.
--json prints a JSON array of run records (id, workflow, version, status, reason, error,
step, current, pendingInterrupts, parentRunId, forkOf, createdAt, updatedAt, ...).`,
  flags: {
    status: { type: "string", isMultiple: true },
    workflow: { type: "string", isMultiple: true },
    orphaned: { type: "boolean" },
    limit: { type: "number" },
    descendantsOf: { type: "string" },
    tag: { type: "string", isMultiple: true },
  },
  args: { min: 0, max: 0 },
  readsOnly: true,
  async run({ flags, out, store }) {
    const statuses = listFlag("status", flags.status);
    for (const s of statuses) {
      if (!RUN_STATUSES.includes(s as RunStatus)) throw new UsageError(`--status ${s}: not a run status (${RUN_STATUSES.join(", ")})`);
    }
    const limit = countFlag("limit", flags.limit) ?? 50;
    const s = await store();
    await noteRoom(s, out);
    if (flags.orphaned && statuses.some((st) => st !== "running")) throw new UsageError("--orphaned lists running runs only: leave out --status, or give --status running");
    const names = [...new Set(listFlag("workflow", flags.workflow))];
    const tags = tagFlags(flags.tag);
    const filter = {
      ...(tags ? { tags } : {}),
      ...(flags.orphaned ? { status: ["running"] as RunStatus[] } : statuses.length > 0 ? { status: statuses as RunStatus[] } : {}),
      // Orphans are picked out of every running run; the limit applies to what is left.
      limit: flags.orphaned ? 10_000 : limit,
    };
    // The store filters by one workflow: several are listed each, then merged newest first.
    const pages =
      flags.descendantsOf !== undefined
        ? [{ runs: narrowed(await runDescendants(s, flags.descendantsOf), statuses, names, tags), nextCursor: undefined }]
        : await Promise.all(names.length === 0 ? [s.listRuns(filter)] : names.map((workflow) => s.listRuns({ ...filter, workflow })));
    const found = {
      runs: pages.flatMap((p) => p.runs).sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1)),
      nextCursor: pages.find((p) => p.nextCursor !== undefined)?.nextCursor,
    };
    const now = Date.now();
    const matching = flags.orphaned ? found.runs.filter((r) => leaseRanOut(r, now)) : found.runs;
    const list = matching.slice(0, limit);
    // A list cut at the limit says so (on stderr, so that --json stays one array).
    if (matching.length > limit || (!flags.orphaned && found.nextCursor !== undefined)) out.note(`showing the ${limit} most recently updated; there are more (--limit N shows more)`);
    // A queued run parked until a time may wait out a failed node's backoff, not a timer: say which.
    const retries = new Map(out.json ? [] : await Promise.all(list.filter((r) => r.status === "queued" && r.wakeAt !== null).map(async (r) => [r.id, await retryWaitOf(s, r)] as const)));
    out.list(list, "no runs", ["RUN", "WORKFLOW", "VERSION", "STATUS", "STEP", "NODES", "WAITING", "UPDATED"], (r) => [
      r.id,
      r.workflow,
      // Runs keep the version they started on: which one tells apart runs of an edited workflow.
      r.version.slice(0, 8),
      runStatus(r, retries.get(r.id)),
      String(currentStep(r)),
      r.current.join(",") || "-",
      r.pendingInterrupts > 0 ? String(r.pendingInterrupts) : "-",
      age(r.updatedAt),
    ]);
    return EXIT.ok;
  },
});

/** Descendants of a run, by the filters given beside --descendants-of, most recently updated first. */
function narrowed(runs: RunRecord[], statuses: string[], workflows: string[], tags: RunTags | undefined): RunRecord[] {
  return runs.filter((r) => (statuses.length === 0 || statuses.includes(r.status)) && (workflows.length === 0 || workflows.includes(r.workflow)) && hasTags(r, tags));
}
