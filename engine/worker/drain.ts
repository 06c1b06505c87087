import type { RunExecutor } from "../runtime/executor.js";
import type { WorkerNotice } from "./notices.js";

/**
 * A stopping worker's drain: its executors start nothing more and release their runs once the
 * nodes running now have finished and committed, for up to `drainMs`; what still runs then is
 * aborted by the caller (`RunExecutor.stop`). Says what it waits for, and how it ended.
 */
export async function drainExecutors(executors: readonly RunExecutor[], drainMs: number, graceMs: number, notify: (notice: WorkerNotice) => void): Promise<void> {
  if (executors.length === 0) return;
  const running = () => executors.flatMap((e) => e.runningNodes().map((node) => ({ runId: e.runId, node })));
  const nodes = running().length;
  const runs = `${executors.length} run${executors.length === 1 ? "" : "s"}`;
  const limit = `${(drainMs / 1000).toFixed(drainMs % 1000 ? 1 : 0)} s`;
  notify({ level: "info", kind: "draining", message: `draining: ${nodes} node${nodes === 1 ? "" : "s"} running (in ${runs}), up to ${limit}` });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    Promise.allSettled(executors.map((e) => e.drain())).then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), drainMs))),
  ]);
  clearTimeout(timer);
  const left = running();
  if (!timedOut || left.length === 0) {
    notify({ level: "info", kind: "drained", message: `drained: the running nodes finished; ${runs} released` });
    return;
  }
  const listed = left.slice(0, 5).map((n) => `${n.node} of run ${n.runId}`).join(", ");
  notify({
    level: "warn",
    kind: "drained",
    message: `drain time is up: aborting ${left.length} node${left.length === 1 ? "" : "s"} still running (${listed}${left.length > 5 ? ", …" : ""}); a result that comes back within the ${graceMs / 1000} s grace is kept`,
  });
}
