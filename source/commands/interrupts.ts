import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { age } from "../cli/format.js";
import { mustGetRun } from "../cli/lookup.js";
import { inline } from "../text/plain.js";

const STATUSES = ["pending", "resolved", "all"] as const;

export const interrupts = defineCommand({
  name: "interrupts",
  usage: "interrupts [--run RUN] [--status pending|resolved|all]",
  summary: "the pending interrupts (approvals, questions, breakpoints), oldest first; or the decisions taken",
  details: `--status resolved lists the interrupts already answered, with who decided what, when and why
(all: both).
--json prints a JSON array of { "id", "runId", "taskId", "node", "step", "kind", "request":
{ "question", "show", "decisions", "responseSchema", "data" }, "status", "resolution"
({ "decision", "actor", "reason"?, "at", "response"?, "checkpointId"? } or null), "createdAt" }.`,
  flags: { run: { type: "string" }, status: { type: "string" } },
  args: { min: 0, max: 0 },
  readsOnly: true,
  async run({ flags, out, store }) {
    const status = (flags.status ?? "pending") as (typeof STATUSES)[number];
    if (!STATUSES.includes(status)) throw new UsageError(`--status ${JSON.stringify(flags.status)}: use pending, resolved or all`);
    const s = await store();
    if (flags.run !== undefined) await mustGetRun(s, flags.run);
    const list = await s.listInterrupts({ ...(status === "all" ? {} : { status }), ...(flags.run !== undefined ? { runId: flags.run } : {}) });
    if (status === "pending") {
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
    }
    out.list(list, status === "resolved" ? "no interrupt has been answered" : "no interrupts", ["INTERRUPT", "RUN", "NODE", "ASKED", "DECISION", "BY", "AGO", "REASON", "QUESTION"], (i) => [
      i.id,
      i.runId,
      i.node,
      age(i.createdAt),
      i.resolution?.decision ?? "(pending)",
      i.resolution?.actor ?? "",
      i.resolution ? age(i.resolution.at) : "",
      inline(i.resolution?.reason ?? "", 40),
      inline(i.request.question ?? "", 50),
    ]);
    return EXIT.ok;
  },
});
