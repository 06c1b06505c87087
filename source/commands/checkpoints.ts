import { TERMINAL_RUN_STATUSES, type CheckpointSummary, type RunRecord } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { age, bytes } from "../cli/format.js";
import { mustGetRun } from "../cli/lookup.js";
import { checkpointNodes, skippedByStep } from "../text/checkpoint-nodes.js";

/**
 * What a listing shows of a checkpoint: its history, not its (possibly large) state; `snapshot`
 * says whether it stores the whole state or only its step's delta.
 */
function listed(c: CheckpointSummary) {
  return {
    id: c.id,
    runId: c.runId,
    n: c.n,
    step: c.step,
    parentId: c.parentId,
    source: c.source,
    actor: c.actor,
    nodes: c.nodes,
    next: c.next,
    snapshot: c.hasSnapshot,
    bytes: c.bytes,
    createdAt: c.createdAt,
  };
}

/**
 * Checkpoints whose step has not planned what runs next: paused after its nodes (`interruptAfter`,
 * a breakpoint), or an edit made as a node. Their nodes' edges are followed when the run goes on,
 * so an empty plan there is not the end — but for the last checkpoint of a run that ended.
 */
function unplanned(run: RunRecord, list: readonly CheckpointSummary[]): Set<number> {
  const ended = TERMINAL_RUN_STATUSES.includes(run.status);
  return new Set(list.filter((c) => c.next.length === 0 && c.control.finished.length > 0 && !(ended && c.n === run.headN)).map((c) => c.n));
}

export const checkpoints = defineCommand({
  name: "checkpoints",
  usage: "checkpoints <run>",
  summary: "a run's checkpoints, oldest first",
  details: `--json prints a JSON array of { "id", "runId", "n", "step", "parentId", "source", "actor",
"nodes", "next", "snapshot", "bytes", "createdAt" }; SIZE is what the checkpoint stores: its
step's delta, and the whole state when it is a snapshot. NEXT is what runs next from it:
(on resume) where its step has not planned yet (paused after its nodes, or an edit made as a
node), - where the run ends. Read a checkpoint's state with pitwall state --checkpoint.`,
  flags: {},
  args: { min: 1, max: 1 },
  readsOnly: true,
  async run({ args, out, store }) {
    const s = await store();
    const run = await mustGetRun(s, args[0]!);
    const list = await s.listCheckpointSummaries(run.id);
    const planLater = unplanned(run, list);
    const skipped = out.json ? new Map<number, Set<string>>() : skippedByStep(await s.listTasks(run.id));
    const nodes = new Map(list.map((c) => [c.n, checkpointNodes(c, skipped).join(",") || "-"]));
    // Its checkpoint 0 goes on from another run's: say which, as its history begins there.
    if (run.forkOf && !out.json) out.note(`run ${run.id} was forked from checkpoint ${run.forkOf.checkpointId} of run ${run.forkOf.runId} (pitwall checkpoints ${run.forkOf.runId})`);
    await out.list(list.map(listed), "no checkpoints", ["N", "CHECKPOINT", "STEP", "SOURCE", "ACTOR", "NODES", "NEXT", "SIZE", "AGE"], (c) => [
      String(c.n),
      c.id,
      String(c.step),
      c.source,
      c.actor,
      nodes.get(c.n)!,
      c.next.join(",") || (planLater.has(c.n) ? "(on resume)" : "-"),
      c.snapshot ? `${bytes(c.bytes)} snapshot` : bytes(c.bytes),
      age(c.createdAt),
    ]);
    return EXIT.ok;
  },
});
