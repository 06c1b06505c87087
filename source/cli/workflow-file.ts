import { dirname, resolve } from "node:path";
import {
  WorkflowError,
  checkWorkflowText,
  formatProblemIn,
  loadWorkflowFile,
  moreProblems,
  type ActionRegistry,
  type CheckedChild,
  type CompiledWorkflow,
  type Problem,
  type WorkflowDefinition,
  type WorkflowVersion,
} from "../../engine/index.js";
import { UsageError } from "./errors.js";
import { fileProblem, readTextFile } from "../../engine/index.js";

export interface CheckedFile {
  problems: Problem[];
  definition?: WorkflowDefinition;
  version?: string;
  children: Map<string, CheckedChild>;
}

/** What `-` stands for, where a workflow file is named: standard input. */
export const STDIN = "-";

/** Reads and checks a workflow file (`-`: standard input); an unreadable file is a usage error. */
export function checkWorkflowFile(file: string, actions?: ActionRegistry): CheckedFile {
  let text: string;
  try {
    text = readTextFile(file === STDIN ? 0 : file);
  } catch (error) {
    throw new UsageError(`cannot read workflow ${file === STDIN ? "from standard input" : file}: ${fileProblem(error)}`);
  }
  // From standard input, sub-workflow paths are relative to the working folder.
  const baseDir = file === STDIN ? process.cwd() : dirname(resolve(file));
  return checkWorkflowText(text, { baseDir, ...(file === STDIN ? {} : { file }), ...(actions ? { actions } : {}) });
}

export function errorsOf(problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => p.severity === "error");
}

export function warningsOf(problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => p.severity === "warning");
}

/** Each problem as `wf.json:12:5: $.nodes.a.next: UNKNOWN_TARGET: ...`. */
export function problemLines(file: string, problems: readonly Problem[]): string[] {
  return problems.map((p) => formatProblemIn(file, p));
}

/** A workflow file's checked definition (with its sub-workflows), to store and start without its code. */
export function checkedVersion(file: string): WorkflowVersion & { warnings: Problem[] } {
  const checked = checkWorkflowFile(file);
  const errors = errorsOf(checked.problems);
  if (errors.length > 0 || !checked.definition || !checked.version) throw invalidFile(file, errors);
  return { definition: checked.definition, version: checked.version, children: checked.children, warnings: warningsOf(checked.problems) };
}

/** A workflow file compiled against actions; invalid, refused as `invalidFile` words it. */
export function compiledFile(file: string, actions: ActionRegistry): CompiledWorkflow {
  try {
    return loadWorkflowFile(file, actions);
  } catch (error) {
    if (error instanceof WorkflowError && error.problems.length > 0) throw invalidFile(file, errorsOf(error.problems as Problem[]));
    throw error;
  }
}

/** `wf.json is invalid: wf.json:3:5: $.nodes...: CODE: ... (and 2 more; pitwall validate wf.json lists them)`. */
export function invalidFile(file: string, errors: readonly Problem[]): WorkflowError {
  const more = moreProblems(errors.length, [`pitwall validate ${file}`]);
  return new WorkflowError(`${file} is invalid: ${errors[0] ? formatProblemIn(file, errors[0]) : "no definition"}${more}`, [...errors]);
}
