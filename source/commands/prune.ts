import { TERMINAL_RUN_STATUSES, pruneRuns, type RunStatus } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { age } from "../cli/format.js";
import { plural } from "../text/plain.js";
import { listFlag, pastMoment } from "../cli/inputs.js";

export const prune = defineCommand({
  name: "prune",
  usage: "prune --ended-before AGE|TIME [--workflow NAME] [--status S ...] [--dry-run]",
  summary: "delete the runs that ended before a time, with their child runs and everything of theirs",
  details: `AGE is 30d, 12h, 90m...; TIME a date and time (2026-11-01T00:00:00Z). Only top-level runs that
ended (${TERMINAL_RUN_STATUSES.join(", ")}; --status picks among them) are deleted, each with its child runs,
checkpoints, tasks, interrupts, commands, events and the artifacts no other run holds; a run whose
child runs have not all ended is kept and named. --dry-run lists the runs and deletes nothing.
--json prints { "before", "dryRun", "runs": [ids], "childRuns", "kept": [{ "runId", "why" }] }.`,
  flags: {
    endedBefore: { type: "string" },
    workflow: { type: "string" },
    status: { type: "string", isMultiple: true },
    dryRun: { type: "boolean" },
  },
  args: { min: 0, max: 0 },
  async run({ flags, out, store }) {
    if (!flags.endedBefore) throw new UsageError("prune needs --ended-before AGE|TIME (the runs that ended before it are deleted)");
    const before = pastMoment("ended-before", flags.endedBefore);
    const statuses = listFlag("status", flags.status);
    for (const s of statuses) {
      if (!TERMINAL_RUN_STATUSES.includes(s as RunStatus)) throw new UsageError(`--status ${s}: only runs that ended are pruned (${TERMINAL_RUN_STATUSES.join(", ")})`);
    }
    const dryRun = flags.dryRun === true;
    const result = await pruneRuns(await store(), {
      endedBefore: before,
      dryRun,
      ...(flags.workflow ? { workflow: flags.workflow } : {}),
      ...(statuses.length > 0 ? { statuses: statuses as RunStatus[] } : {}),
    });
    const when = new Date(before).toISOString();
    // What "no run" means names every filter given, not only the time.
    const which = `${statuses.length > 0 ? `${statuses.join(" or ")} ` : ""}run${flags.workflow ? ` of ${flags.workflow}` : ""}`;
    if (out.json) {
      out.value({ before, dryRun, runs: result.runs.map((r) => r.id), childRuns: result.childRuns, kept: result.kept });
      return EXIT.ok;
    }
    if (dryRun) {
      await out.list(result.runs, `no ${which} ended before ${when}`, ["RUN", "WORKFLOW", "STATUS", "ENDED"], (r) => [r.id, r.workflow, r.status, age(r.endedAt ?? r.updatedAt)]);
      if (result.runs.length > 0) out.line(`would delete ${plural(result.runs.length, "run")} that ended before ${when}, with their child runs (--dry-run: nothing was deleted)`);
    } else {
      const children = result.childRuns > 0 ? ` and ${plural(result.childRuns, "child run")}` : "";
      out.line(`deleted ${plural(result.runs.length, "run")}${children} that ended before ${when}`);
    }
    for (const { runId, why } of result.kept) out.line(`kept ${runId}: ${why}`);
    return EXIT.ok;
  },
});
