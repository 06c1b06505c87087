import { WorkflowError } from "../errors.js";
import type { NodeDefinition, WorkflowDefinition } from "./definition.js";

/**
 * A canonical definition with its sub-workflows written inline, where it names them by version:
 * a document that validates and loads again on its own (`pitwall graph RUN --json`), with the
 * same version, since checking it names each child by version again.
 */
export async function inlineSubWorkflows(
  definition: WorkflowDefinition,
  childOf: (version: string) => Promise<WorkflowDefinition | undefined> | WorkflowDefinition | undefined,
): Promise<WorkflowDefinition> {
  const nodes: Record<string, NodeDefinition> = {};
  for (const [name, node] of Object.entries(definition.nodes)) {
    if (node.kind !== "subgraph" || typeof node.workflow !== "string") {
      nodes[name] = node;
      continue;
    }
    const child = await childOf(node.workflow);
    if (!child) throw new WorkflowError(`sub-workflow version ${node.workflow} of ${definition.name} (node "${name}") is not available`);
    const { workflowName: _name, ...rest } = node;
    nodes[name] = { ...rest, workflow: (await inlineSubWorkflows(child, childOf)) as unknown as Record<string, unknown> };
  }
  return { ...definition, nodes };
}
