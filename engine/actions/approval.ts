import type { ApprovalNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";
import { valueAtPath } from "../state/paths.js";
import { renderTemplate, templateScope } from "../llm/template.js";

/**
 * An approval node asks a person (its question a template over the state, like a prompt); the
 * decision is its route key. `edit` (the operator changed
 * the state while approving) follows the `edit` route if there is one, else the `approve` one.
 */
export function approvalNode(def: ApprovalNodeDefinition): NodeFunction {
  return async (state, ctx) => {
    const show = Object.fromEntries((def.show ?? []).map((path) => [path, valueAtPath(state, path)]));
    const answer = await (ctx as InternalContext).interruptAs("approval", {
      question: renderTemplate(def.question, templateScope(def.map !== undefined, state, ctx)),
      show,
      decisions: def.decisions,
    });
    if (!def.routes) return {};
    const route = answer.decision === "edit" && !("edit" in def.routes) ? "approve" : answer.decision;
    return { route };
  };
}
