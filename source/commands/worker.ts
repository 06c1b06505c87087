import { once } from "node:events";
import {
  MAX_WAIT_MS,
  Worker,
  WorkflowRegistry,
  actionRegistry,
  answerUnansweredCommands,
  extendRegistry,
  leaseRanOut,
  leftBehindText,
  runsAtOnceOf,
  runsLeftBehind,
  type Store,
  type StoreError,
} from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError, countFlag } from "../cli/errors.js";
import { durationFlag, listFlag } from "../cli/inputs.js";
import { plural } from "../text/plain.js";
import { modelOfEnvironment } from "../cli/model.js";
import { roomWarning } from "../cli/room.js";
import { HealthServer, parseHealthAddress } from "../worker/health.js";
import { WorkerLog } from "../worker/log.js";

/** How long a stopping worker lets its running nodes finish (with the 5 s grace, within Kubernetes' default 30 s). */
const DRAIN_SECONDS = 20;

export const worker = defineCommand({
  name: "worker",
  usage:
    "worker [--actions MODULE ...] [--workflow NAME ...] [--concurrency N] [--lease SECONDS] [--drain-timeout SECONDS] [--kill-grace SECONDS] [--health [HOST:]PORT] [--retain AGE] [--snapshot-every N] [--once] [--id NAME]",
  summary: "execute runs from the store (Ctrl-C or SIGTERM drains it and stops it cleanly)",
  details: `Runs every stored workflow whose actions the loaded modules export. Any number of workers,
in any number of processes, can share a store: each run is leased to one of them.
--once executes what is runnable now and exits when nothing is (paused runs wait for you).
--workflow NAME (repeatable, or a comma-separated list) runs only those workflows, and the
sub-workflows their runs start; other runs are left to other workers.
--concurrency N runs up to N runs at once in this process (default 16).
--id NAME names this worker in leases, events, the console and the process title (pitwall worker
NAME); default: host name and process id. A live worker of another process with that id is refused.
--lease SECONDS is how long a run stays this worker's without a renewal (default 15); renewed every
third of it, so a node that computes without awaiting for longer loses its run to another worker.
Ctrl-C or SIGTERM drains the worker: it claims nothing more, lets the nodes running now finish and
commit for up to --drain-timeout SECONDS (default ${DRAIN_SECONDS}; 0 stops them at once), releases their runs
for other workers, then aborts the nodes still running; a node that ignores its abort signal is
abandoned after --kill-grace SECONDS (default 5; also the grace of pitwall kill). A second signal
exits at once, the runs it held waiting for their leases to run out.
--health [HOST:]PORT serves /healthz, /readyz and /metrics (Prometheus) over HTTP, on loopback
unless a host is given (0.0.0.0:9090).
--retain AGE (30d, 12h) deletes, every ten minutes, the top-level runs that ended longer ago than
that, with their child runs and everything of theirs (as pitwall prune --ended-before AGE).
--snapshot-every N stores a full snapshot of the state every N checkpoints (default 64): reading
any checkpoint's state then folds at most N deltas; a smaller N reads faster and stores more.
Logs one line per event: the time (UTC), a level word and the message; a run's end on stdout, the
rest on stderr. Says first which actions and tools it loaded and, when PITWALL_LLM_BASE_URL,
PITWALL_LLM_API_KEY or PITWALL_LLM_SCRIPT names one, the model of llm, tool and agent nodes (a
script and a server at once, or a script that cannot be read, is refused).
--json logs each line as { "time", "level", "worker", "kind", "message", ... } on stdout; a run's
end as kind "run-ended" with "runId", "status" and "why" (and "leaseLost": true when another worker
or an operator took the run from it: "why" then says what became of the run).`,
  flags: {
    actions: { type: "string", isMultiple: true },
    workflow: { type: "string", isMultiple: true },
    concurrency: { type: "number" },
    lease: { type: "number" },
    drainTimeout: { type: "number" },
    killGrace: { type: "number" },
    health: { type: "string" },
    retain: { type: "string" },
    snapshotEvery: { type: "number" },
    once: { type: "boolean" },
    id: { type: "string" },
  },
  args: { min: 0, max: 0 },
  createsStore: true,
  stopsOnSignal: true,
  exitsWhenDone: true,
  async run({ flags, out, store, actions, signal, global }) {
    const concurrency = countFlag("concurrency", flags.concurrency);
    if (flags.id !== undefined && !/^[\w.@:-]+$/.test(flags.id)) throw new UsageError(`--id ${JSON.stringify(flags.id)}: use letters, digits, '.', '_', '@', ':' or '-'`);
    const snapshotEvery = countFlag("snapshot-every", flags.snapshotEvery);
    const seconds = (flag: string, value: number | undefined, min: number) => {
      if (value !== undefined && !(value >= min && value * 1000 <= MAX_WAIT_MS)) throw new UsageError(`--${flag} ${value}: give seconds from ${min} to ${Math.floor(MAX_WAIT_MS / 1000)}`);
      return value === undefined ? undefined : Math.round(value * 1000);
    };
    const leaseMs = seconds("lease", flags.lease, 1);
    const drainMs = seconds("drain-timeout", flags.drainTimeout, 0) ?? DRAIN_SECONDS * 1000;
    const killGraceMs = seconds("kill-grace", flags.killGrace, 0);
    const health = flags.health !== undefined ? parseHealthAddress(flags.health) : undefined;
    const retainMs = flags.retain !== undefined ? durationFlag("retain", flags.retain) : undefined;
    // A repeatable flag not given arrives as [] (parseFlags).
    const only = flags.workflow && flags.workflow.length > 0 ? listFlag("workflow", flags.workflow) : undefined;
    const loaded = await actions(flags.actions);
    // Before the store is opened (or made): a worker that would call the wrong model, or none, does not start.
    const model = modelOfEnvironment();
    const registry = extendRegistry(loaded ?? actionRegistry({}), model ? { model } : {});
    const s = await store();
    const workflows = new WorkflowRegistry(s, registry);
    // A store gone from under the worker (its file deleted) never comes back: exit, do not poll on.
    let onStoreGone: (error: StoreError) => void = () => {};
    const storeGone = new Promise<StoreError>((resolve) => (onStoreGone = resolve));
    let log: WorkerLog | undefined;
    const w = new Worker(s, workflows, {
      secretKeys: global.secretKeys,
      onStoreGone: (error) => onStoreGone(error),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(leaseMs !== undefined ? { leaseMs } : {}),
      ...(killGraceMs !== undefined ? { killGraceMs } : {}),
      ...(snapshotEvery !== undefined ? { snapshotPolicy: { every: snapshotEvery } } : {}),
      ...(flags.id ? { id: flags.id } : {}),
      ...(only ? { workflows: only } : {}),
      ...(retainMs !== undefined ? { retainMs } : {}),
      // The store failing between runs (Redis frozen or gone, SQLite locked), a run taken over, a
      // run it cannot take (a misspelled action, a module not loaded): said, not swallowed.
      onNotice: ({ level, kind, message, ...fields }) => log!.log({ ...fields, level, kind, message: kind === "draining" ? `${message}; signal again to stop now` : message }),
      onRunEnd: (runId, end) => {
        if ("error" in end) log!.log({ level: "error", kind: "run-error", message: `${runId ? `run ${runId}: ` : ""}${end.error}`, runId: runId || null, error: end.error });
        // A lost lease says what became of the run in its why: not the status it had here (running).
        else if (end.leaseLost) log!.log({ level: "warn", kind: "run-ended", message: `run ${runId}: ${end.why}`, runId, status: end.status, why: end.why, leaseLost: true });
        else log!.log({ level: end.status === "failed" ? "warn" : "info", kind: "run-ended", message: `run ${runId} ${end.status}: ${end.why}`, runId, status: end.status, why: end.why });
      },
    });
    log = new WorkerLog(out, w.id);
    // Before it says anything: a second worker with a live one's id does not start.
    if (!flags.once) await w.checkIdFree();
    // `ps` and `pkill -f "pitwall worker m3$"` tell this worker from the others (its arguments, which may hold a store's password, stay hidden).
    process.title = `pitwall worker ${w.id}`;
    // Said once the store answers: a store that does not is the one line to read.
    log.info(
      "started",
      loaded ? `loaded ${namesOf(registry.names(), "action")} and ${namesOf(registry.toolNames?.() ?? [], "tool")}` : "no actions modules loaded (--actions or the config file): only workflows without action nodes can run",
      { actions: registry.names(), tools: registry.toolNames?.() ?? [] },
    );
    if (model) log.info("started", `model: ${model.description}`, { model: model.description });
    const room = roomWarning(await s.room().catch(() => undefined));
    // The level word says it is a warning.
    if (room) log.log({ level: "warn", kind: "store-room", message: room.replace(/^warning: /, "") });
    if (flags.once) {
      await w.drain();
      // What a serving worker does every 30 s, done once: commands their recorders left unanswered.
      for (const notice of await answerUnansweredCommands(s, `worker:${w.id}`, global.secretKeys)) log.log({ ...notice });
      for (const left of await runsLeftBehind(s, workflows)) log.log({ level: "warn", kind: "left-behind", message: leftBehindText(left) });
      await noteHeld(log, s, w.id);
      await noteLimited(log, s);
      return EXIT.ok;
    }
    const server = health ? await HealthServer.listen(w, health, leaseMs ?? 15_000, concurrency ?? 16) : undefined;
    w.start();
    log.info("started", `worker ${w.id} on ${s.description}${only ? `, for workflow${only.length > 1 ? "s" : ""} ${only.join(", ")}` : ""} (Ctrl-C to stop)`, { store: s.description, ...(only ? { workflows: only } : {}) });
    if (server) log.info("health", `health on ${server.url} (/healthz, /readyz, /metrics)`, { url: server.url });
    try {
      const gone = await Promise.race([storeGone, signal.aborted ? undefined : once(signal, "abort").then(() => undefined)]);
      if (gone) {
        await w.stop();
        throw gone;
      }
      log.info("stopping", `worker ${w.id}: stopping; it claims nothing more${drainMs > 0 ? "" : ", and aborts its running nodes now"}; its runs are released for other workers`);
      await w.stop({ drainMs });
      log.info("stopped", `worker ${w.id} stopped`);
      return EXIT.ok;
    } finally {
      await server?.close();
    }
  },
});

/** `2 actions (a, b)`, `no tools`: what the modules gave, a long list cut short. */
function namesOf(names: readonly string[], what: string): string {
  if (names.length === 0) return `no ${what}s`;
  const shown = names.slice(0, 8).join(", ");
  return `${plural(names.length, what)} (${shown}${names.length > 8 ? ", …" : ""})`;
}

/**
 * Running runs another worker holds: it may be alive, or gone with its lease still running (then
 * another `--once` after the lease takes them over). Ending quietly would hide them.
 */
async function noteHeld(log: WorkerLog, store: Store, self: string): Promise<void> {
  const now = Date.now();
  const { runs } = await store.listRuns({ status: ["running"], limit: 1000 });
  const held = runs.filter((r) => r.owner !== self && r.owner !== null && !leaseRanOut(r, now));
  if (held.length === 0) return;
  const last = Math.max(...held.map((r) => r.leaseUntil ?? now));
  log.info(
    "left-behind",
    `${plural(held.length, "running run")} held by other workers (${held.slice(0, 3).map((r) => `${r.id} by ${r.owner}`).join(", ")}${held.length > 3 ? ", ..." : ""}): if those are gone, their leases run out within ${Math.ceil((last - now) / 1000)} s and a worker then takes them over`,
  );
}

/**
 * Queued runs their workflow's `limits.runsAtOnce` holds back, its places taken by runs other
 * workers hold (this one has drained): ending quietly would hide them.
 */
async function noteLimited(log: WorkerLog, store: Store): Promise<void> {
  const now = Date.now();
  const { runs } = await store.listRuns({ status: ["queued"], limit: 1000 });
  const ready = runs.filter((r) => r.waitingOn === null && (r.wakeAt === null || r.wakeAt <= now));
  if (ready.length === 0) return;
  const atOnce = await runsAtOnceOf(store, ready.map((r) => r.workflow));
  const held = new Map<string, number>();
  for (const run of ready) {
    const limit = atOnce.get(run.workflow);
    if (limit && limit.running >= limit.limit) held.set(run.workflow, (held.get(run.workflow) ?? 0) + 1);
  }
  for (const [workflow, count] of held) {
    const { limit, running } = atOnce.get(workflow)!;
    log.info("left-behind", `${plural(count, "queued run")} of ${workflow} held back by its limits.runsAtOnce (${limit}; ${running} running): a worker takes ${count === 1 ? "it" : "them"} as places free`);
  }
}
