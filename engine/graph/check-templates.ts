import type { NodeDefinition } from "./definition.js";
import type { ProblemList } from "./problems.js";
import { ITEM_NAMES, malformedPlaceholders, templateKeys } from "../llm/template.js";
import type { StateKeyDefinition } from "../state/schema.js";

type Path = (string | number)[];

/** The fields of a node that are templates over the state: model nodes' prompts, an approval's question. */
function templatesOf(node: NodeDefinition): [string, string | undefined][] {
  switch (node.kind) {
    case "llm":
    case "agent":
      return [["system", node.system], ["prompt", node.prompt]];
    case "tool":
      return [["system", node.system], ["instruction", node.instruction]];
    case "approval":
      return [["question", node.question]];
    default:
      return [];
  }
}

/**
 * Every placeholder reads a state key, or, in a mapped node, its task's `item` or `index`; a `{{`
 * that opens no placeholder would be sent as written.
 */
export function checkTemplates(node: NodeDefinition, path: Path, state: Record<string, StateKeyDefinition>, problems: ProblemList): void {
  const mapped = node.map !== undefined;
  for (const [field, template] of templatesOf(node)) {
    if (template === undefined) continue;
    for (const message of malformedPlaceholders(template)) problems.error([...path, field], "INVALID_FIELD", message);
    for (const key of templateKeys(template)) {
      const itemName = (ITEM_NAMES as readonly string[]).includes(key);
      if (mapped && itemName) continue;
      if (Object.hasOwn(state, key)) continue;
      problems.error(
        [...path, field],
        "UNKNOWN_STATE_KEY",
        itemName
          ? `the template reads {{${key}}}, the ${key === "item" ? "item" : "position of the item"} of a mapped node, but this node has no \`map: { over }\` (and state has no key "${key}")`
          : `the template reads {{${key}}}, but state has no key "${key}"`,
      );
    }
  }
}
