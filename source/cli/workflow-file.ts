import { dirname, resolve } from "node:path";
import {
  WorkflowError,
  checkWorkflowText,
  formatProblem,
  type ActionRegistry,
  type CheckedChild,
  type Problem,
  type WorkflowDefinition,
  type WorkflowVersion,
} from "../../engine/index.js";
import { UsageError } from "./errors.js";
import { fileProblem } from "../../engine/index.js";
import { readTextFile } from "./inputs.js";

export interface CheckedFile {
  problems: Problem[];
  definition?: WorkflowDefinition;
  version?: string;
  children: Map<string, CheckedChild>;
}

/** Reads and checks a workflow file; an unreadable file is a usage error. */
export function checkWorkflowFile(file: string, actions?: ActionRegistry): CheckedFile {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (error) {
    throw new UsageError(`cannot read workflow ${file}: ${fileProblem(error)}`);
  }
  return checkWorkflowText(text, { baseDir: dirname(resolve(file)), file, ...(actions ? { actions } : {}) });
}

export function errorsOf(problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => p.severity === "error");
}

export function problemLines(problems: readonly Problem[]): string[] {
  return problems.map(formatProblem);
}

/** A workflow file's checked definition (with its sub-workflows), to store and start without its code. */
export function checkedVersion(file: string): WorkflowVersion {
  const checked = checkWorkflowFile(file);
  const errors = errorsOf(checked.problems);
  if (errors.length > 0 || !checked.definition || !checked.version) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more; run pitwall validate)` : "";
    throw new WorkflowError(`${file} is invalid: ${errors[0] ? formatProblem(errors[0]) : "no definition"}${more}`, errors);
  }
  return { definition: checked.definition, version: checked.version, children: checked.children };
}
