import { loadStateChain } from "../state/read.js";
import type { SnapshotPolicy } from "../state/snapshot.js";
import type { InterruptRecord, TaskRecord } from "../store/records.js";
import type { Claim, Store } from "../store/store.js";
import type { DurableCalls } from "./calls.js";
import type { RunState } from "./run-state.js";

/**
 * Reads into `rs` the run's head and state, the tasks of its step in progress (their durable
 * calls into `calls`) and its interrupts; `claimed` is the run as just claimed (read otherwise),
 * with its head checkpoint when the store read it with the claim.
 */
export async function loadRun(store: Store, rs: RunState, calls: DurableCalls, snapshotPolicy: SnapshotPolicy, claimed?: Pick<Claim, "run" | "head">): Promise<void> {
  const run = claimed?.run ?? (await store.getRun(rs.run.id));
  if (!run) throw new Error(`run ${rs.run.id} vanished`);
  rs.run = run;
  const head = claimed?.head ?? (run.head ? await store.getCheckpoint(run.head) : undefined);
  if (!head) throw new Error(`run ${run.id} has no head checkpoint`);
  rs.head = head;
  rs.chain = await loadStateChain(store, run.id, head, snapshotPolicy);
  // Tasks and interrupts are written by commits only: a run none was applied to (just created,
  // or forked) has neither, and most runs a worker claims are such (a query each saved).
  const fresh = run.lastCommit === null;
  const tasks = fresh ? NO_TASKS : await store.listTasks(run.id, { step: head.step + 1 });
  rs.tasks = new Map(tasks.filter((t) => t.parent === null).map((t) => [t.id, t]));
  calls.load(tasks.filter((t) => t.parent !== null));
  const interrupts = fresh ? NO_INTERRUPTS : await store.listInterrupts({ runId: run.id });
  rs.interrupts = new Map(interrupts.filter((i) => i.status === "pending" || i.step === head.step + 1).map((i) => [i.id, i]));
}

const NO_TASKS: readonly TaskRecord[] = [];
const NO_INTERRUPTS: readonly InterruptRecord[] = [];
