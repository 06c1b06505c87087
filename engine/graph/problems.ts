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
  "WAIT_IN_PAST",
  "CATCH_NEVER_REACHED",
  "WRITE_CONFLICT",
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export interface Problem {
  /** Where in the workflow document, as a JSON path (`$.nodes.check.routes.YES`). */
  path: string;
  code: ProblemCode;
  message: string;
  severity: "error" | "warning";
  /** Where in the file (from 1), when the problem was found in JSON text and its path is in it. */
  line?: number;
  column?: number;
}

type Path = readonly (string | number)[];

/**
 * Which of the keys written more than once along a path a problem is in: at the path's `at`-th
 * part, the `occurrence`-th of those keys (from 0); at any other, the last, which JSON keeps.
 */
export type Occurrences = readonly (readonly [at: number, occurrence: number])[];

/** Collects problems while a definition is checked, so that all of them are reported at once. */
export class ProblemList {
  readonly items: Problem[] = [];
  /** Each problem's path as parts, to find it in the text it was read from. */
  private readonly parts = new Map<Problem, Path>();
  /** For a problem of a definition a later key of the same name replaced: which of those keys. */
  private readonly occurrences = new Map<Problem, Occurrences>();

  error(path: Path, code: ProblemCode, message: string): Problem {
    return this.add(path, { path: jsonPath(path), code, message, severity: "error" });
  }

  warning(path: Path, code: ProblemCode, message: string): Problem {
    return this.add(path, { path: jsonPath(path), code, message, severity: "warning" });
  }

  pathOf(problem: Problem): Path | undefined {
    return this.parts.get(problem);
  }

  /** Which of the keys its path names more than once in the text the problem is in (else the last, which JSON keeps). */
  occurrencesOf(problem: Problem): Occurrences {
    return this.occurrences.get(problem) ?? [];
  }

  /**
   * Takes another list's problems (those `only` keeps) as found in this document: at `prefix`
   * (an inline sub-workflow's, whose paths start at its own root), and `within` definitions that
   * later keys of the same name replaced (a node's, at its name: `[[1, occurrence]]`).
   */
  adopt(other: ProblemList, options: { prefix?: Path; within?: Occurrences; only?: (path: Path) => boolean } = {}): void {
    const shift = options.prefix?.length ?? 0;
    for (const problem of other.items) {
      const path = other.pathOf(problem) ?? [];
      if (options.only && !options.only(path)) continue;
      const full = [...(options.prefix ?? []), ...path];
      const adopted = this.add(full, { ...problem, path: jsonPath(full) });
      const occurrences = [...(options.within ?? []), ...other.occurrencesOf(problem).map(([at, n]) => [at + shift, n] as const)];
      if (occurrences.length > 0) this.occurrences.set(adopted, occurrences);
    }
  }

  private add(path: Path, problem: Problem): Problem {
    this.items.push(problem);
    this.parts.set(problem, [...path]);
    return problem;
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

/**
 * The one-line form led by the file and, when known, the line and column (`wf.json:12:5:
 * $.nodes...`), as compilers print it, so that editors and CI annotations jump to the place.
 */
export function formatProblemIn(file: string, problem: Problem): string {
  const where = problem.line !== undefined ? `${file}:${problem.line}:${problem.column ?? 1}` : file;
  return `${where}: ${formatProblem(problem)}`;
}

/**
 * What an invalid workflow's one-line error adds past its first problem: how many more, and where
 * to see them all (`pitwall validate FILE`, or the error's `problems`).
 */
export function moreProblems(errors: number, seeThem: readonly string[]): string {
  return errors > 1 ? ` (and ${errors - 1} more; ${seeThem.join(" or ")} list${seeThem.length === 1 ? "s" : ""} them)` : "";
}
