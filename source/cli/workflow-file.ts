import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  checkWorkflowText,
  formatProblem,
  loadWorkflowFile,
  type ActionRegistry,
  type CompiledWorkflow,
  type NodeFunction,
  type Problem,
  type WorkflowDefinition,
} from "../../engine/index.js";
import { UsageError } from "./errors.js";

export interface CheckedFile {
  problems: Problem[];
  definition?: WorkflowDefinition;
  version?: string;
}

/** Reads and checks a workflow file; an unreadable file is a usage error. */
export function checkWorkflowFile(file: string, actions?: ActionRegistry): CheckedFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read workflow ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return checkWorkflowText(text, { baseDir: dirname(resolve(file)), ...(actions ? { actions } : {}) });
}

export function errorsOf(problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => p.severity === "error");
}

export function problemLines(problems: readonly Problem[]): string[] {
  return problems.map(formatProblem);
}

/**
 * Stands in for actions when a workflow is only stored and started here: a worker elsewhere,
 * with the real actions modules loaded, executes it. Never called by this process.
 */
const notLoadedHere: ActionRegistry = {
  get: (name) => {
    const stand: NodeFunction = () => {
      throw new Error(`action ${name} is not loaded in this process`);
    };
    return stand;
  },
  names: () => [],
};

/** Compiles a workflow file to start runs of it; without actions, nodes are not checked against a module. */
export function compileForStart(file: string, actions: ActionRegistry | undefined): CompiledWorkflow {
  return loadWorkflowFile(file, actions ?? notLoadedHere);
}
