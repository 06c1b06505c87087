import { RUN_STATUSES, currentStep, type RunStatus } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError, countFlag } from "../cli/errors.js";
import { listFlag } from "../cli/inputs.js";
import { age, runStatus } from "../cli/format.js";
import { noteRoom } from "../cli/room.js";

export const runs = defineCommand({
  name: "runs",
  usage: "runs [--status S ...] [--workflow NAME] [--limit N]",
  summary: "list runs, most recently updated first",
  details: `--status takes ${RUN_STATUSES.join(", ")} (repeat it or separate with commas).
--json prints a JSON array of run records (id, workflow, version, status, reason, error,
step, current, pendingInterrupts, parentRunId, forkOf, createdAt, updatedAt, ...).`,
  flags: {
    status: { type: "string", isMultiple: true },
    workflow: { type: "string" },
    limit: { type: "number" },
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
    const { runs: list } = await s.listRuns({
      ...(statuses.length > 0 ? { status: statuses as RunStatus[] } : {}),
      ...(flags.workflow ? { workflow: flags.workflow } : {}),
      limit,
    });
    out.list(list, "no runs", ["RUN", "WORKFLOW", "STATUS", "STEP", "NODES", "WAITING", "UPDATED"], (r) => [
      r.id,
      r.workflow,
      runStatus(r),
      String(currentStep(r)),
      r.current.join(",") || "-",
      r.pendingInterrupts > 0 ? String(r.pendingInterrupts) : "-",
      age(r.updatedAt),
    ]);
    return EXIT.ok;
  },
});
