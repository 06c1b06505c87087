import { closest } from "../suggest.js";
import type { Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import type { WorkflowRegistry } from "./registry.js";

/**
 * The workflows a worker is limited to (`WorkerOptions.workflows`) that no workflow of the store
 * or of this process is called, each said with the closest known name: a misspelled one would
 * leave the worker waiting for runs that never come, without a word.
 */
export async function sayUnknownWorkflows(store: Store, registry: WorkflowRegistry, names: readonly string[] | undefined, say: (notice: WorkerNotice) => void): Promise<void> {
  if (!names) return;
  // A store that fails is the claim loop's to say.
  const stored = await store.listWorkflows().catch(() => undefined);
  if (!stored) return;
  const known = [...new Set([...stored.map((w) => w.name), ...registry.registeredNames()])].sort();
  for (const name of names) if (!known.includes(name)) say({ level: "warn", kind: "unknown-workflow", message: unknownText(name, known) });
}

function unknownText(name: string, known: readonly string[]): string {
  const near = closest(name, known);
  const hint = near !== undefined ? `did you mean ${near}?` : known.length === 0 ? "none is known yet" : `known: ${known.slice(0, 5).join(", ")}${known.length > 5 ? ", …" : ""}`;
  return `this worker is limited to workflow ${name}, which is neither in the store nor registered in this process (${hint}): it takes no run of it until one is stored`;
}
