import { once } from "node:events";
import {
  MAX_WAIT_MS,
  Worker,
  WorkflowRegistry,
  actionRegistry,
  extendRegistry,
  leaseRanOut,
  leftBehindText,
  runsLeftBehind,
  type Store,
  type StoreError,
} from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError, countFlag } from "../cli/errors.js";
import { clock } from "../cli/format.js";
import { plural } from "../text/plain.js";
import type { Output } from "../cli/output.js";
import { clean } from "../text/plain.js";
import { noteRoom } from "../cli/room.js";
import { modelOfEnvironment } from "../cli/model.js";

export const worker = defineCommand({
  name: "worker",
  usage: "worker [--actions MODULE ...] [--concurrency N] [--lease SECONDS] [--snapshot-every N] [--once] [--id NAME]",
  summary: "execute runs from the store (Ctrl-C stops it cleanly)",
  details: `Runs every stored workflow whose actions the loaded modules export. Any number of workers,
in any number of processes, can share a store: each run is leased to one of them.
--once executes what is runnable now and exits when nothing is (paused runs wait for you).
--concurrency N runs up to N runs at once in this process (default 16).
--id NAME names this worker in leases, events and the console (default: host name and process id).
--lease SECONDS is how long a run stays this worker's without a renewal (default 15); renewed every
third of it, so a node that computes without awaiting for longer loses its run to another worker.
--snapshot-every N stores a full snapshot of the state every N checkpoints (default 64): reading
any checkpoint's state then folds at most N deltas; a smaller N reads faster and stores more.
Says first which actions and tools it loaded and, when PITWALL_LLM_BASE_URL, PITWALL_LLM_API_KEY or
PITWALL_LLM_SCRIPT names one, the model of llm, tool and agent nodes (a script and a server at once,
or a script that cannot be read, is refused). Prints one line per run execution that ends here;
--json prints { "runId", "status", "why" } per line.`,
  flags: {
    actions: { type: "string", isMultiple: true },
    concurrency: { type: "number" },
    lease: { type: "number" },
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
    if (flags.lease !== undefined && !(flags.lease >= 1 && flags.lease * 1000 <= MAX_WAIT_MS)) throw new UsageError(`--lease ${flags.lease}: give seconds from 1 to ${Math.floor(MAX_WAIT_MS / 1000)}`);
    const loaded = await actions(flags.actions);
    // Before the store is opened (or made): a worker that would call the wrong model, or none, does not start.
    const model = modelOfEnvironment();
    const registry = extendRegistry(loaded ?? actionRegistry({}), model ? { model } : {});
    const s = await store();
    // Said once the store answers: a store that does not is the one line to read.
    if (!out.json) {
      out.note(loaded ? `loaded ${namesOf(registry.names(), "action")} and ${namesOf(registry.toolNames?.() ?? [], "tool")}` : "no actions modules loaded (--actions or the config file): only workflows without action nodes can run");
      if (model) out.note(`model: ${model.description}`);
    }
    await noteRoom(s, out);
    const workflows = new WorkflowRegistry(s, registry);
    // A store gone from under the worker (its file deleted) never comes back: exit, do not poll on.
    let onStoreGone: (error: StoreError) => void = () => {};
    const storeGone = new Promise<StoreError>((resolve) => (onStoreGone = resolve));
    const w = new Worker(s, workflows, {
      secretKeys: global.secretKeys,
      onStoreGone: (error) => onStoreGone(error),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(flags.lease !== undefined ? { leaseMs: Math.round(flags.lease * 1000) } : {}),
      ...(snapshotEvery !== undefined ? { snapshotPolicy: { every: snapshotEvery } } : {}),
      ...(flags.id ? { id: flags.id } : {}),
      // The store failing between runs (Redis frozen or gone, SQLite locked): said, not swallowed.
      onError: (message) => (out.json ? out.value({ runId: null, error: message }) : out.note(`${clock(Date.now())} ${clean(message)}`)),
      // A run it cannot take (a misspelled action, a module not loaded) would wait without a word.
      onLeftBehind: (left) => out.note(`${clock(Date.now())} ${clean(leftBehindText(left))}`),
      onRunEnd: (runId, end) => {
        if ("error" in end) {
          // Not a run's end: the worker could not claim or follow events (the store went away...).
          if (out.json) out.value({ runId: runId || null, error: end.error });
          else out.note(`${clock(Date.now())} ${runId ? `run ${runId}: ` : ""}${clean(end.error)}`);
        } else if (out.json) out.value({ runId, status: end.status, why: end.why });
        else out.line(`${clock(Date.now())} run ${runId} ${end.status}: ${clean(end.why)}`);
      },
    });
    if (flags.once) {
      await w.drain();
      await noteLeftBehind(out, s, workflows);
      await noteHeld(out, s, w.id);
      return EXIT.ok;
    }
    w.start();
    if (!out.json) out.note(`worker ${w.id} on ${s.description} (Ctrl-C to stop)`);
    const gone = await Promise.race([storeGone, signal.aborted ? undefined : once(signal, "abort").then(() => undefined)]);
    if (gone) {
      await w.stop();
      throw gone;
    }
    if (!out.json) out.note(`worker ${w.id}: stopping; runs in progress are released for other workers`);
    await w.stop();
    return EXIT.ok;
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
async function noteHeld(out: Output, store: Store, self: string): Promise<void> {
  const now = Date.now();
  const { runs } = await store.listRuns({ status: ["running"], limit: 1000 });
  const held = runs.filter((r) => r.owner !== self && r.owner !== null && !leaseRanOut(r, now));
  if (held.length === 0) return;
  const last = Math.max(...held.map((r) => r.leaseUntil ?? now));
  out.note(
    `${plural(held.length, "running run")} held by other workers (${held.slice(0, 3).map((r) => `${r.id} by ${r.owner}`).join(", ")}${held.length > 3 ? ", ..." : ""}): if those are gone, their leases run out within ${Math.ceil((last - now) / 1000)} s and a worker then takes them over`,
  );
}

/** Runs this worker could not take, by workflow version, with why: `--once` ending quietly would hide them. */
async function noteLeftBehind(out: Output, store: Store, workflows: WorkflowRegistry): Promise<void> {
  for (const left of await runsLeftBehind(store, workflows)) out.note(leftBehindText(left));
}
