import { existsSync } from "node:fs";
import { PitwallError, renderGraph, type WorkflowDefinition } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { checkedVersion, problemLines } from "../cli/workflow-file.js";

export const graph = defineCommand({
  name: "graph",
  usage: "graph <workflow.json | run>",
  summary: "draw a workflow as text: nodes, edges, route labels",
  details: `Given a file (a path ending in .json, containing a "/", or naming a file here), draws that workflow; given a run id, draws the version the run uses (from the store).
--json prints { "name", "version", "definition" } (the canonical definition).`,
  flags: {},
  args: { min: 1, max: 1 },
  readsOnly: true,
  async run({ args, out, store }) {
    const ref = args[0]!;
    let drawn: { definition: WorkflowDefinition; version: string };
    // A run id has no path separators, no extension and is not a file here.
    if (/\.json$/i.test(ref) || /[\\/]/.test(ref) || existsSync(ref)) {
      const checked = checkedVersion(ref);
      for (const line of problemLines(ref, checked.warnings)) out.note(line);
      drawn = checked;
    } else {
      const s = await store();
      const run = await s.getRun(ref);
      // NOT_FOUND, as every other command says of an unknown run (exit 2 all the same).
      if (!run) throw new PitwallError("NOT_FOUND", `run ${ref} not found (to draw a workflow file, give its path)`);
      const record = await s.getWorkflow(run.version);
      if (!record) throw new UsageError(`workflow version ${run.version} of run ${ref} is not in the store`);
      drawn = record;
    }
    if (out.json) out.value({ name: drawn.definition.name, version: drawn.version, definition: drawn.definition });
    else out.block(renderGraph(drawn.definition, drawn.version));
    return EXIT.ok;
  },
});
