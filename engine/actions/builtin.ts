import type { NodeDefinition } from "../graph/definition.js";
import type { CompiledWorkflow, NodeFunction } from "../graph/model.js";
import type { StateKeyDefinition } from "../state/schema.js";
import { approvalNode } from "./approval.js";
import { subgraphNode } from "./subgraph.js";
import { waitNode } from "./wait.js";

/** The function behind a node of a built-in kind (everything but `action`). */
export function builtinNodeFunction(
  def: Exclude<NodeDefinition, { kind: "action" }>,
  children: ReadonlyMap<string, CompiledWorkflow>,
  parentState: Record<string, StateKeyDefinition>,
): NodeFunction | undefined {
  switch (def.kind) {
    case "approval":
      return approvalNode(def);
    case "wait":
      return waitNode(def);
    case "subgraph": {
      const child = children.get(def.workflow as string);
      return child ? subgraphNode(def, child, parentState) : undefined;
    }
  }
}
