import { workflowTree } from "../graph/load.js";
import type { CompiledWorkflow } from "../graph/model.js";
import type { Store } from "../store/store.js";

/** Stores a workflow's version and its sub-workflows' (idempotent), so any process can draw or run it. */
export async function storeWorkflow(store: Store, workflow: CompiledWorkflow): Promise<void> {
  for (const w of workflowTree(workflow)) {
    await store.putWorkflow({ version: w.version, name: w.name, definition: w.definition, createdAt: Date.now() });
  }
}
