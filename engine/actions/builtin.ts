import type { NodeDefinition } from "../graph/definition.js";
import type { CompiledWorkflow, NodeFunction } from "../graph/model.js";
import type { ModelServices } from "../llm/services.js";
import type { StateKeyDefinition } from "../state/schema.js";
import { agentNode } from "./agent.js";
import { approvalNode } from "./approval.js";
import { llmNode } from "./llm.js";
import { subgraphNode } from "./subgraph.js";
import { toolNode } from "./tool.js";
import { waitNode } from "./wait.js";

/** The function behind a node of a built-in kind (everything but `action`). */
export function builtinNodeFunction(
  def: Exclude<NodeDefinition, { kind: "action" }>,
  children: ReadonlyMap<string, CompiledWorkflow>,
  parentState: Record<string, StateKeyDefinition>,
  services: ModelServices,
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
    case "llm":
      return llmNode(def, services);
    case "tool":
      return toolNode(def, services);
    case "agent":
      return agentNode(def, services);
  }
}
