import type { CatchSpec } from "../graph/definition.js";
import { schemaTypes } from "../state/schema.js";
import type { TaskRecord } from "../store/records.js";
import { NOT_SAVED, type Failure } from "./retry.js";
import type { RunState } from "./run-state.js";
import { countTries, tryCountText } from "./tries.js";

/** A failure as a catch writes it to its output key. */
export interface CaughtFailure {
  node: string;
  /** The item of a mapped node that failed. */
  index?: number;
  code?: string;
  name: string;
  message: string;
  /** Tries, as `show` counts them (a resume is not another). */
  attempts: number;
}

/** What a node's catch makes of its task's last failure: taken (with its writes), or not. */
export type CatchDecision = { caught: false; why?: string } | { caught: true; writes: [string, unknown][] };

/**
 * Whether the node's catch takes this failure, which its retry policy gave up on. An error of this
 * process's own while saving the step (NOT_SAVED) is not the node's failure: the run pauses for an
 * operator as before. The failure goes to the output key as an object or, on a key that only holds
 * text, as its message; a key that takes neither (its schema asks for more) leaves it uncaught,
 * saying why.
 */
export function catchFailure(rs: RunState, failed: TaskRecord, failure: Failure & { message: string }): CatchDecision {
  const spec = rs.nodeDefinition(failed.node)?.catch;
  if (!spec || failure.code === NOT_SAVED || !catches(spec, failure)) return { caught: false };
  if (spec.output === undefined) return { caught: true, writes: [] };
  const { tries } = countTries(failed.attempts);
  const value: CaughtFailure = {
    node: failed.node,
    ...(failed.index !== null ? { index: failed.index } : {}),
    ...(failure.code ? { code: failure.code } : {}),
    name: failure.name ?? "Error",
    message: failure.message,
    attempts: tries,
  };
  const reducer = rs.workflow.reducerOf(spec.output);
  const current = rs.chain.state[spec.output];
  // A custom reducer's result is not checked here: it is the author's code, run at the barrier.
  if (typeof reducer === "function") return { caught: true, writes: [[spec.output, value]] };
  const text = `node "${failed.node}"${failed.index !== null ? ` [${failed.index}]` : ""} failed after ${tryCountText(countTries(failed.attempts))}: ${failure.message}`;
  const problem = rs.workflow.validator.checkWrite(spec.output, value, reducer, current);
  if (!problem) return { caught: true, writes: [[spec.output, value]] };
  const textProblem = rs.workflow.validator.checkWrite(spec.output, text, reducer, current);
  if (!textProblem) return { caught: true, writes: [[spec.output, text]] };
  // Of the two refusals, the one of the form the key holds says what to change.
  const holdsText = schemaTypes(rs.workflow.definition.state[spec.output] ?? {}).includes("string");
  return { caught: false, why: `its catch could not write the failure to "${spec.output}": ${holdsText ? textProblem : problem}` };
}

/**
 * Failures of the deployment, not of the node's work: a catch takes them only when its `on` names
 * them, so that a worker without a model does not quietly run every compensation branch.
 */
const DEPLOYMENT_FAILURES: ReadonlySet<string> = new Set(["NO_MODEL"]);

function catches(spec: CatchSpec, failure: Failure): boolean {
  if (!spec.on || spec.on.length === 0) return failure.code === undefined || !DEPLOYMENT_FAILURES.has(failure.code);
  return spec.on.some((c) => c === failure.name || c === failure.code);
}
