import { actionRegistry, checkWorkflowText, type Problem } from "../../engine/index.js";

const noop = () => ({});

/** The actions the validation tests' workflows name. */
export const checkActions = actionRegistry({ tasks: { init: noop, work: noop, check: noop, noop, a: noop, b: noop, join: noop } });

/** Every problem of a workflow (its value, or its text), checked against those actions unless told not to. */
export function problemsOf(doc: unknown, withActions = true): Problem[] {
  return checkWorkflowText(typeof doc === "string" ? doc : JSON.stringify(doc, null, 2), withActions ? { actions: checkActions } : {}).problems;
}
