import { NotFoundError } from "../errors.js";
import type { WorkflowDefinition } from "../graph/definition.js";
import { StateValidator } from "../state/schema.js";
import type { Store } from "../store/store.js";

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
