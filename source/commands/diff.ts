import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { mustGetRun } from "../cli/lookup.js";
import { diffLine } from "../text/diff-text.js";

export const diff = defineCommand({
  name: "diff",
  usage: "diff <run> <checkpoint> [<checkpoint>]",
  summary: "what changed in the state from one checkpoint to another (or from one's parent)",
  details: `Checkpoints are ids or numbers within the run, compared in the order given. Lines read "+ path: value" (added),
"- path: old" (removed), "~ path: old → new" (changed) and "+ path: +N items" (appended).
--json prints { "from": id|null, "to": id, "diff": [{ "op", "path", "value"?, "old"?, "count"?, "items"? }] }.`,
  flags: {},
  args: { min: 2, max: 3 },
  readsOnly: true,
  async run({ args, out, store, operator }) {
    const [runId, a, b] = args as [string, string, string | undefined];
    await mustGetRun(await store(), runId);
    const result = await (await operator()).diff(runId, a, b);
    if (out.json) {
      out.value({ from: result.from?.id ?? null, to: result.to.id, diff: result.diff });
      return EXIT.ok;
    }
    // A fork's first checkpoint is compared with its parent in the source run: named as that run's.
    const label = (c: typeof result.to) => `${c.runId === runId ? "" : `${c.runId}:`}${c.n} (${c.source}, step ${c.step}, ${c.actor})`;
    out.line(`run ${runId}: checkpoint ${result.from ? label(result.from) : "(empty)"} → ${label(result.to)}`);
    if (result.diff.length === 0) out.line("no change");
    for (const entry of result.diff) out.line(diffLine(entry));
    return EXIT.ok;
  },
});
