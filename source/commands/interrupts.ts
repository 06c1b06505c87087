import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { age } from "../cli/format.js";
import { mustGetRun } from "../cli/lookup.js";
import { redact, type InterruptRecord, type Store } from "../../engine/index.js";
import { deadlineText } from "../text/deadline-text.js";
import { interruptDetails, nodeLabel } from "../text/interrupt-text.js";
import { inline } from "../text/plain.js";

const STATUSES = ["pending", "resolved", "all"] as const;

export const interrupts = defineCommand({
  name: "interrupts",
  usage: "interrupts [--run RUN] [--status pending|resolved|all]",
  summary: "the pending interrupts (approvals, questions, breakpoints), oldest first; or the decisions taken",
  details: `--status resolved lists the interrupts already answered, with who decided what, when and why
(all: both). DETAILS shows what a pending interrupt puts before you: the tool call an agent asks
to make, with its arguments, or the data or values it shows (one line; --json for all of it).
--json prints a JSON array of { "id", "runId", "taskId", "node", "step", "kind", "request":
{ "question", "show", "decisions", "responseSchema", "data" }, "status", "resolution"
({ "decision", "actor", "reason"?, "at", "response"?, "checkpointId"?, "timedOut"? } or null),
"createdAt", "deadline"? ({ "at", "decision", "response"? }) }. DEADLINE says what an interrupt
with a deadline answers itself, and when; past it, a worker answers it as actor timeout.`,
  flags: { run: { type: "string" }, status: { type: "string" } },
  args: { min: 0, max: 0 },
  readsOnly: true,
  async run({ flags, out, store, global }) {
    const status = (flags.status ?? "pending") as (typeof STATUSES)[number];
    if (!STATUSES.includes(status)) throw new UsageError(`--status ${JSON.stringify(flags.status)}: use pending, resolved or all`);
    const s = await store();
    if (flags.run !== undefined) await mustGetRun(s, flags.run);
    const stored = await s.listInterrupts({ ...(status === "all" ? {} : { status }), ...(flags.run !== undefined ? { runId: flags.run } : {}) });
    // An answer is kept whole for its node (edited tool arguments); shown, its secrets are hidden.
    const list = stored.map((i) => (i.resolution?.response === undefined ? i : { ...i, resolution: { ...i.resolution, response: redact(i.resolution.response, global.secretKeys) } }));
    // A mapped node's items ask the same question: the item tells their lines apart.
    const indexes = out.json ? new Map<string, number | null>() : await taskIndexes(s, list);
    const node = (i: InterruptRecord) => nodeLabel(i.node, i.taskId === null ? null : indexes.get(i.taskId));
    if (status === "pending") {
      // Only interrupts that have one say what their deadline does.
      const deadlines = list.some((i) => i.deadline) ? ["DEADLINE"] : [];
      const now = Date.now();
      await out.list(list, "no pending interrupts", ["INTERRUPT", "RUN", "NODE", "KIND", "AGE", "DECISIONS", ...deadlines, "QUESTION", "DETAILS"], (i) => [
        i.id,
        i.runId,
        node(i),
        i.kind,
        age(i.createdAt),
        i.request.decisions.join("/"),
        ...(deadlines.length ? [deadlineText(i.deadline, now)] : []),
        inline(i.request.question ?? "", 70),
        interruptDetails(i.request),
      ]);
      return EXIT.ok;
    }
    await out.list(list, status === "resolved" ? "no interrupt has been answered" : "no interrupts", ["INTERRUPT", "RUN", "NODE", "ASKED", "DECISION", "BY", "AGO", "REASON", "QUESTION"], (i) => [
      i.id,
      i.runId,
      node(i),
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

/** The map item of each interrupt's task, by task id. */
async function taskIndexes(store: Store, interrupts: readonly InterruptRecord[]): Promise<Map<string, number | null>> {
  const ids = [...new Set(interrupts.flatMap((i) => (i.taskId === null ? [] : [i.taskId])))];
  const tasks = await Promise.all(ids.map((id) => store.getTask(id)));
  return new Map(ids.map((id, n) => [id, tasks[n]?.index ?? null]));
}
