import { newestFirst, type RunRecord, type Store } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { age } from "../cli/format.js";

export const workflows = defineCommand({
  name: "workflows",
  usage: "workflows [NAME]",
  summary: "the workflow versions the store keeps, newest first, with how many runs each has",
  details: `Every version a run used is kept (sub-workflows' too), so that any run's graph can be drawn
(pitwall graph VERSION, or a run) and its workflow run by a worker without the file it came from.
With NAME, only that workflow's versions. RUNS counts the runs on each version, UNFINISHED those
queued, running or paused.
--json prints a JSON array of { "name", "version", "createdAt", "runs", "unfinished" }.`,
  flags: {},
  args: { min: 0, max: 1 },
  readsOnly: true,
  async run({ args, out, store }) {
    const name = args[0];
    const s = await store();
    const stored = (await s.listWorkflows()).filter((w) => name === undefined || w.name === name);
    const counts = await runsByVersion(s, name);
    const rows = stored
      .sort((a, b) => a.name.localeCompare(b.name) || newestFirst(a, b))
      .map((w) => ({ name: w.name, version: w.version, createdAt: w.createdAt, runs: counts.get(w.version)?.runs ?? 0, unfinished: counts.get(w.version)?.unfinished ?? 0 }));
    await out.list(rows, name === undefined ? "no workflows stored" : `no versions of workflow ${name} stored`, ["WORKFLOW", "VERSION", "CREATED", "RUNS", "UNFINISHED"], (w) => [
      w.name,
      w.version,
      `${age(w.createdAt)} ago`,
      String(w.runs),
      String(w.unfinished),
    ]);
    return EXIT.ok;
  },
});

const UNFINISHED: readonly RunRecord["status"][] = ["queued", "running", "paused"];

/** Runs per version, read page by page (of one workflow when named). */
async function runsByVersion(s: Store, workflow: string | undefined): Promise<Map<string, { runs: number; unfinished: number }>> {
  const counts = new Map<string, { runs: number; unfinished: number }>();
  let cursor: string | undefined;
  do {
    const page = await s.listRuns({ limit: 1000, ...(workflow !== undefined ? { workflow } : {}), ...(cursor !== undefined ? { cursor } : {}) });
    for (const run of page.runs) {
      const count = counts.get(run.version) ?? { runs: 0, unfinished: 0 };
      count.runs++;
      if (UNFINISHED.includes(run.status)) count.unfinished++;
      counts.set(run.version, count);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return counts;
}
