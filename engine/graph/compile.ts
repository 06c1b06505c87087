import type { z } from "zod";
import { WorkflowError } from "../errors.js";
import { builtinNodeFunction } from "../actions/builtin.js";
import type { CustomReducer, Reducer, State } from "../state/ops.js";
import { StateValidator } from "../state/schema.js";
import type { WorkflowDefinition } from "./definition.js";
import type { CompiledNode, CompiledWorkflow, NodeFunction, Router } from "./model.js";
import { ProblemList } from "./problems.js";

export interface Implementations {
  action(name: string): NodeFunction | undefined;
  routers?: ReadonlyMap<string, Router>;
  reducers?: ReadonlyMap<string, CustomReducer>;
  /** Code workflows keep their own zod schema per key (refinements included). */
  keySchemas?: ReadonlyMap<string, z.ZodType>;
  children: ReadonlyMap<string, CompiledWorkflow>;
}

/** Binds a checked canonical definition to the code that runs its nodes. */
export function compileDefinition(definition: WorkflowDefinition, version: string, impl: Implementations): CompiledWorkflow {
  const problems = new ProblemList();
  const nodes = new Map<string, CompiledNode>();
  for (const [name, def] of Object.entries(definition.nodes)) {
    let run: NodeFunction | undefined;
    if (def.kind === "action") {
      run = impl.action(def.action);
      if (!run) problems.error(["nodes", name, "action"], "UNKNOWN_ACTION", `action "${def.action}" is not exported by any loaded actions module`);
    } else {
      run = builtinNodeFunction(def, impl.children, definition.state);
      if (!run) problems.error(["nodes", name, "workflow"], "BAD_SUBGRAPH", `sub-workflow ${String((def as { workflow?: unknown }).workflow)} is not available`);
    }
    if (!run) continue;
    const router = impl.routers?.get(name);
    nodes.set(name, { name, definition: def, run, ...(router ? { router } : {}) });
  }
  for (const [key, def] of Object.entries(definition.state)) {
    if (def.reducer === "custom" && !impl.reducers?.has(key)) {
      problems.error(["state", key, "reducer"], "BAD_REDUCER", `state key "${key}" needs its custom reducer function, which only its code can give`);
    }
  }
  if (problems.hasErrors) {
    throw new WorkflowError(`workflow ${definition.name} cannot run here: ${problems.items[0]!.message}`, problems.items);
  }

  const overrides = Object.fromEntries(impl.keySchemas ?? []);
  const validator = new StateValidator(definition.state, overrides);
  const reducers = new Map<string, Reducer>();
  for (const [key, def] of Object.entries(definition.state)) {
    const custom = impl.reducers?.get(key);
    reducers.set(key, custom ?? (def.reducer === "append" || def.reducer === "merge" ? def.reducer : "replace"));
  }
  return {
    name: definition.name,
    version,
    definition,
    validator,
    nodes,
    children: impl.children,
    reducerOf: (key) => reducers.get(key) ?? "replace",
    initialState: (input) => validator.parseInput(input) as State,
  };
}
