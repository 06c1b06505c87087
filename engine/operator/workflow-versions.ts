import { NotFoundError } from "../errors.js";
import type { WorkflowDefinition } from "../graph/definition.js";
import { StateValidator } from "../state/schema.js";
import type { Store } from "../store/store.js";
import type { WorkflowVersion } from "./start.js";

export interface StoredVersion {
  definition: WorkflowDefinition;
  validator: StateValidator;
}

/** The workflow versions an operator reads, with their state validators; versions never change, so they are kept. */
export class WorkflowVersions {
  private readonly found = new Map<string, StoredVersion>();

  constructor(private readonly store: Store) {}

  async get(version: string): Promise<StoredVersion> {
    let found = this.found.get(version);
    if (!found) {
      const record = await this.store.getWorkflow(version);
      if (!record) throw new NotFoundError("workflow version", version);
      found = { definition: record.definition, validator: new StateValidator(record.definition.state) };
      this.found.set(version, found);
    }
    return found;
  }
}

/** How a state key of a stored definition is reduced (its `reducer`, `replace` when it names none). */
export function reducerOf(definition: WorkflowDefinition, key: string): "replace" | "append" | "merge" {
  const reducer: unknown = definition.state[key]?.reducer;
  return reducer === "append" || reducer === "merge" ? reducer : "replace";
}

/** Stored versions newest first: by when each was first stored, a tie (one millisecond) by hash, so that every listing agrees. */
export function newestFirst(a: { version: string; createdAt: number }, b: { version: string; createdAt: number }): number {
  return b.createdAt - a.createdAt || (a.version < b.version ? 1 : a.version > b.version ? -1 : 0);
}

/** The newest stored version of a workflow among `stored` (the store's listing). */
export function latestVersion(stored: readonly { name: string; version: string; createdAt: number }[], name: string): string | undefined {
  return stored.filter((w) => w.name === name).sort(newestFirst)[0]?.version;
}

/** The newest stored version of each workflow named; one with none stored is left out. */
export async function newestVersions(store: Store, names: Iterable<string>): Promise<Map<string, WorkflowVersion>> {
  const stored = await store.listWorkflows();
  const found = new Map<string, WorkflowVersion>();
  for (const name of new Set(names)) {
    const version = latestVersion(stored, name);
    const record = version === undefined ? undefined : await store.getWorkflow(version);
    if (record) found.set(name, { definition: record.definition, version: record.version });
  }
  return found;
}
