import { TIMEOUT_ROUTE, type ApprovalNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";
import { valueAtPath } from "../state/paths.js";
import { renderTemplate, templateScope } from "../llm/template.js";

/**
 * An approval node asks a person (its question a template over the state, like a prompt); the
 * decision is its route key. `edit` (the operator changed
 * the state while approving) follows the `edit` route if there is one, else the `approve` one; the
 * answer its deadline gave follows the `timeout` route if there is one, else its decision's.
 */
export function approvalNode(def: ApprovalNodeDefinition): NodeFunction {
  return async (state, ctx) => {
    const show = Object.fromEntries((def.show ?? []).map((path) => [path, valueAtPath(state, path)]));
    const answer = await (ctx as InternalContext).interruptAs("approval", {
      question: renderTemplate(def.question, templateScope(def.map !== undefined, state, ctx)),
      show,
      decisions: def.decisions,
      ...(def.deadline ? { deadline: def.deadline } : {}),
    });
    if (!def.routes) return {};
    if (answer.timedOut && TIMEOUT_ROUTE in def.routes) return { route: TIMEOUT_ROUTE };
    const route = answer.decision === "edit" && !("edit" in def.routes) ? "approve" : answer.decision;
    return { route };
  };
}
