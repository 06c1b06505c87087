import { jsonPath } from "../state/schema.js";

export const PROBLEM_CODES = [
  "BAD_JSON",
  "INVALID_FIELD",
  "DUPLICATE_NODE",
  "UNKNOWN_TARGET",
  "UNKNOWN_NODE",
  "MISSING_START",
  "UNREACHABLE_NODE",
  "ROUTES_WITHOUT_DEFAULT",
  "CONFLICTING_EDGES",
  "UNKNOWN_ACTION",
  "UNKNOWN_STATE_KEY",
  "BAD_REDUCER",
  "BAD_STATE_SCHEMA",
  "WAITFOR_NOT_PREDECESSOR",
  "EDGE_NOT_AWAITED",
  "REJECT_GOES_ON",
  "NO_PATH_TO_END",
  "JOIN_MAY_STICK",
  "BAD_SUBGRAPH",
  "UNKNOWN_TOOL",
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export interface Problem {
  /** Where in the workflow document, as a JSON path (`$.nodes.check.routes.YES`). */
  path: string;
  code: ProblemCode;
  message: string;
  severity: "error" | "warning";
}

/** Collects problems while a definition is checked, so that all of them are reported at once. */
export class ProblemList {
  readonly items: Problem[] = [];

  error(path: readonly (string | number)[], code: ProblemCode, message: string): void {
    this.items.push({ path: jsonPath(path), code, message, severity: "error" });
  }

  warning(path: readonly (string | number)[], code: ProblemCode, message: string): void {
    this.items.push({ path: jsonPath(path), code, message, severity: "warning" });
  }

  get hasErrors(): boolean {
    return this.items.some((p) => p.severity === "error");
  }
}

/** `$.nodes.work.next: UNKNOWN_TARGET: ...`, the one-line form the CLI prints. */
export function formatProblem(problem: Problem): string {
  const tag = problem.severity === "warning" ? " (warning)" : "";
  return `${problem.path}: ${problem.code}${tag}: ${problem.message}`;
}
