import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { age } from "../cli/format.js";
import { mustGetRun } from "../cli/lookup.js";
import { inline } from "../cli/output.js";

export const interrupts = defineCommand({
  name: "interrupts",
  usage: "interrupts [--run RUN]",
  summary: "the pending interrupts (approvals, questions, breakpoints), oldest first",
  details: `--json prints a JSON array of { "id", "runId", "taskId", "node", "step", "kind", "request":
{ "question", "show", "decisions", "responseSchema", "data" }, "status", "createdAt" }.`,
  flags: { run: { type: "string" } },
  args: { min: 0, max: 0 },
  readsOnly: true,
  async run({ flags, out, store }) {
    const s = await store();
    if (flags.run !== undefined) await mustGetRun(s, flags.run);
    const list = await s.listInterrupts({ status: "pending", ...(flags.run !== undefined ? { runId: flags.run } : {}) });
    out.list(list, "no pending interrupts", ["INTERRUPT", "RUN", "NODE", "KIND", "AGE", "DECISIONS", "QUESTION"], (i) => [
      i.id,
      i.runId,
      i.node,
      i.kind,
      age(i.createdAt),
      i.request.decisions.join("/"),
      inline(i.request.question ?? "", 70),
    ]);
    return EXIT.ok;
  },
});
