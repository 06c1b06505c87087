import type { z } from "zod";
import { WorkflowError } from "../errors.js";
import { builtinNodeFunction } from "../actions/builtin.js";
import { modelServices } from "../llm/services.js";
import type { BoundTool } from "../llm/tools.js";
import type { ModelProvider } from "../llm/types.js";
import type { CustomReducer, Reducer, State } from "../state/ops.js";
import { StateValidator } from "../state/schema.js";
import type { WorkflowDefinition } from "./definition.js";
import type { CompiledNode, CompiledWorkflow, NodeFunction, Router } from "./model.js";
import { ProblemList, type Problem } from "./problems.js";

export interface Implementations {
  action(name: string): NodeFunction | undefined;
  /** Why an action is not there, when `action` gives none (default: no module exports it). */
  missingAction?(name: string): string | undefined;
  routers?: ReadonlyMap<string, Router>;
  reducers?: ReadonlyMap<string, CustomReducer>;
  /** Code workflows keep their own zod schema per key (and its messages). */
  keySchemas?: ReadonlyMap<string, z.ZodType>;
  children: ReadonlyMap<string, CompiledWorkflow>;
  /** Tools of model nodes; absent when this process cannot tell (they are then looked up when a node runs). */
  tool?(name: string): BoundTool | undefined;
  /** Where `tool` finds its tools, as a missing one's message names it (default: the loaded actions modules). */
  toolsFrom?: string;
  /** What checking the definition warned of (kept on the compiled workflow for its author). */
  warnings?: readonly Problem[];
  /** The model of model nodes; absent: the environment's, looked up when a node first runs. */
  model?: ModelProvider;
}

/** Binds a checked canonical definition to the code that runs its nodes. */
export function compileDefinition(definition: WorkflowDefinition, version: string, impl: Implementations): CompiledWorkflow {
  const problems = new ProblemList();
  const nodes = new Map<string, CompiledNode>();
  const services = modelServices(impl);
  for (const [name, def] of Object.entries(definition.nodes)) {
    let run: NodeFunction | undefined;
    if (def.kind === "action") {
      run = impl.action(def.action);
      if (!run) problems.error(["nodes", name, "action"], "UNKNOWN_ACTION", impl.missingAction?.(def.action) ?? `action "${def.action}" is not exported by any loaded actions module`);
    } else {
      if (impl.tool && (def.kind === "tool" || def.kind === "agent")) {
        const names = def.kind === "tool" ? [def.tool] : def.tools;
        names.forEach((tool, i) => {
          if (!impl.tool!(tool)) problems.error(["nodes", name, ...(def.kind === "tool" ? ["tool"] : ["tools", i])], "UNKNOWN_TOOL", `tool "${tool}" is not ${impl.toolsFrom ?? "exported by any loaded actions module"}`);
        });
      }
      run = builtinNodeFunction(def, impl.children, definition.state, services);
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
    warnings: impl.warnings ?? [],
    reducerOf: (key) => reducers.get(key) ?? "replace",
    initialState: (input) => validator.parseInput(input) as State,
    withModel: (model) =>
      compileDefinition(definition, version, {
        ...impl,
        model: impl.model ?? model,
        children: new Map([...impl.children].map(([v, child]) => [v, child.withModel(model)])),
      }),
  };
}
