import { workerLive, type WorkerRecord } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { age } from "../cli/format.js";

export const workers = defineCommand({
  name: "workers",
  usage: "workers",
  summary: "the workers of the store: live ones, and those gone in the last day",
  details: `From the heartbeat each worker writes to the store (every 5 s, or every third of its lease
when shorter). STATE is live; stopped (it said so as it stopped); or gone (it stopped writing:
killed, crashed, cut off from the store), past its lease and three heartbeats. RUNS is how many
runs it executes of how many it may; WORKFLOWS the workflows it can run (only: the ones --workflow
limits it to). Records of workers not seen for a day are dropped.
--json prints an array of { "id", "live", "host", "pid", "startedAt", "lastSeen", "stoppedAt",
"running", "concurrency", "leaseMs", "heartbeatMs", "workflows": [{ "name", "version" }], "only",
"actions", "instance" }.`,
  flags: {},
  args: { min: 0, max: 0 },
  readsOnly: true,
  async run({ out, store }) {
    const now = Date.now();
    const listed = (await (await store()).listWorkers()).map((w) => ({ ...w, live: workerLive(w, now) }));
    // Live ones first, each group the most recently seen first (the store's order).
    const sorted = [...listed.filter((w) => w.live), ...listed.filter((w) => !w.live)];
    await out.list(sorted, "no worker has written a heartbeat to this store in the last day", ["WORKER", "STATE", "HOST", "PID", "RUNS", "STARTED", "WORKFLOWS"], (w) => [
      w.id,
      state(w, now),
      w.host,
      String(w.pid),
      `${w.running}/${w.concurrency}`,
      `${age(w.startedAt, now)} ago`,
      workflowsOf(w),
    ]);
    return EXIT.ok;
  },
});

function state(w: WorkerRecord & { live: boolean }, now: number): string {
  if (w.live) return "live";
  if (w.stoppedAt !== null) return `stopped ${age(w.stoppedAt, now)} ago`;
  return `gone (last seen ${age(w.lastSeen, now)} ago)`;
}

/** Its workflows by name (a name with several versions once), and what it is limited to. */
function workflowsOf(w: WorkerRecord): string {
  const names = [...new Set(w.workflows.map((v) => v.name))].sort();
  const shown = names.length === 0 ? "-" : `${names.slice(0, 6).join(", ")}${names.length > 6 ? `, … (${names.length})` : ""}`;
  return w.only ? `${shown} (only: ${w.only.join(", ")})` : shown;
}
