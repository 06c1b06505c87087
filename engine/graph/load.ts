import { dirname, relative, resolve } from "node:path";
import { WorkflowError, fileProblem } from "../errors.js";
import { readTextFile } from "../text-file.js";
import { checkWorkflow, type CheckResult, type CheckedChild } from "./check.js";
import { isPlainObject } from "../state/ops.js";
import { compileDefinition } from "./compile.js";
import type { WorkflowDefinition } from "./definition.js";
import type { ActionRegistry, CompiledWorkflow } from "./model.js";
import { ProblemList, formatProblem, formatProblemIn, type Problem } from "./problems.js";
import { locateProblems, parseWorkflowText, type LostDefinition } from "./parse-json.js";
import { missingAction } from "./actions.js";

export interface CheckFileOptions {
  /** When given, actions it lacks are UNKNOWN_ACTION problems (and tools it lacks, UNKNOWN_TOOL). */
  actions?: ActionRegistry;
  /** Where relative sub-workflow paths are resolved from. */
  baseDir?: string;
  /** The file the text was read from: a sub-workflow that leads back to it is a cycle. */
  file?: string;
}

/**
 * Checks a workflow written as JSON text: syntax (with line and column), structure, graph and,
 * when actions are given, that every action exists. Returns all problems at once.
 */
export function checkWorkflowText(text: string, options: CheckFileOptions = {}): CheckResult {
  try {
    return checkText(text, options, options.file ? [resolve(options.file)] : []);
  } catch (error) {
    // Parsing and checking recurse into the document: a file nested thousands deep exhausts the stack.
    if (!(error instanceof RangeError)) throw error;
    const problems = new ProblemList();
    problems.error([], "BAD_JSON", "the workflow nests too deeply to read (values inside values thousands of levels down)");
    return { problems: problems.items, children: new Map() };
  }
}

function checkText(text: string, options: CheckFileOptions, stack: string[]): CheckResult {
  const problems = new ProblemList();
  const parsed = parseWorkflowText(text, problems);
  if (parsed === undefined) return { problems: problems.items, children: new Map() };
  const result = checkValue(parsed.value, options, stack, problems, parsed.lostNodes);
  locateProblems(text, problems);
  return result;
}

function checkValue(value: unknown, options: CheckFileOptions, stack: string[], problems = new ProblemList(), lostNodes: LostDefinition[] = []): CheckResult {
  const children = new Map<string, CheckedChild>();
  const result = checkWorkflow(
    value,
    {
      ...(options.actions ? { missingAction: (name: string) => missingAction(options.actions!, name) } : {}),
      ...(options.actions?.tool ? { hasTool: (name: string) => options.actions!.tool!(name) !== undefined } : {}),
      lostNodes,
      resolveChild: (ref, path, list) => {
        const child = loadChild(ref, options, stack, path, list);
        if (child) {
          for (const [v, c] of child.children) children.set(v, c);
          children.set(child.version!, { definition: child.definition!, version: child.version! });
        }
        return child?.definition ? { definition: child.definition, version: child.version! } : undefined;
      },
    },
    problems,
  );
  for (const [v, c] of children) result.children.set(v, c);
  return result;
}

const CYCLE = "sub-workflows include each other";

function loadChild(
  ref: string | Record<string, unknown>,
  options: CheckFileOptions,
  stack: string[],
  path: (string | number)[],
  problems: ProblemList,
): CheckResult | undefined {
  let result: CheckResult;
  if (isPlainObject(ref)) {
    result = checkValue(ref, options, stack);
  } else {
    const file = resolve(options.baseDir ?? process.cwd(), ref);
    if (stack.includes(file)) {
      const cycle = [...stack.slice(stack.indexOf(file)), file].map((f) => relative(process.cwd(), f) || f);
      problems.error(path, "BAD_SUBGRAPH", `${CYCLE}: ${cycle.join(" → ")}`);
      return undefined;
    }
    let text: string;
    try {
      text = readTextFile(file);
    } catch (error) {
      problems.error(path, "BAD_SUBGRAPH", `cannot read sub-workflow ${ref}: ${fileProblem(error)}`);
      return undefined;
    }
    result = checkText(text, { ...options, baseDir: dirname(file) }, [...stack, file]);
  }
  const errors = result.problems.filter((p) => p.severity === "error");
  const name = isPlainObject(ref) ? "the inline sub-workflow" : `sub-workflow ${ref}`;
  for (const p of errors) {
    // A cycle is said once, whole, rather than wrapped once per file it goes through.
    if (p.code === "BAD_SUBGRAPH" && p.message.startsWith(CYCLE)) problems.error(path, "BAD_SUBGRAPH", p.message);
    else problems.error(path, "BAD_SUBGRAPH", `in ${isPlainObject(ref) ? `${name}: ${formatProblem(p)}` : `sub-workflow ${formatProblemIn(ref, p)}`}`);
  }
  return errors.length === 0 ? result : undefined;
}

/** Loads and compiles a JSON workflow file, binding its actions; throws a WorkflowError listing every problem. */
export function loadWorkflowFile(file: string, actions: ActionRegistry): CompiledWorkflow {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (error) {
    throw new WorkflowError(`cannot read workflow ${file}: ${fileProblem(error)}`);
  }
  return loadWorkflowText(text, actions, { baseDir: dirname(resolve(file)), label: file, file });
}

export function loadWorkflowText(
  text: string,
  actions: ActionRegistry,
  options: { baseDir?: string; label?: string; file?: string } = {},
): CompiledWorkflow {
  const result = checkWorkflowText(text, { actions, ...(options.baseDir ? { baseDir: options.baseDir } : {}), ...(options.file ? { file: options.file } : {}) });
  return compileChecked(result, actions, options.label ?? "workflow", options.file);
}

/** Compiles a workflow given as a parsed JSON value (e.g. built by a program). */
export function loadWorkflowValue(value: unknown, actions: ActionRegistry, options: { baseDir?: string } = {}): CompiledWorkflow {
  return compileChecked(checkValue(value, { actions, ...options }, []), actions, "workflow");
}

function compileChecked(result: CheckResult, actions: ActionRegistry, label: string, file?: string): CompiledWorkflow {
  const errors = result.problems.filter((p) => p.severity === "error");
  if (errors.length > 0 || !result.definition || !result.version) throw invalid(label, errors, file);
  return compileWithChildren(result.definition, result.version, actions, result.children, result.problems.filter((p) => p.severity === "warning"));
}

/**
 * Compiles a stored canonical definition (children given by version): how a worker runs a
 * workflow it knows only from the store, with actions from the modules it loaded.
 */
export function compileWithChildren(
  definition: WorkflowDefinition,
  version: string,
  actions: ActionRegistry,
  children: ReadonlyMap<string, CheckedChild>,
  warnings: readonly Problem[] = [],
): CompiledWorkflow {
  const compiled = new Map<string, CompiledWorkflow>();
  const build = (def: WorkflowDefinition, v: string): CompiledWorkflow => {
    const existing = compiled.get(v);
    if (existing) return existing;
    const mine = new Map<string, CompiledWorkflow>();
    for (const node of Object.values(def.nodes)) {
      if (node.kind !== "subgraph") continue;
      const child = children.get(node.workflow as string);
      if (!child) throw new WorkflowError(`sub-workflow version ${String(node.workflow)} of ${def.name} is not available`);
      mine.set(child.version, build(child.definition, child.version));
    }
    const result = compileDefinition(def, v, {
      action: (name) => actions.get(name),
      missingAction: (name) => missingAction(actions, name, "any loaded actions module"),
      children: mine,
      ...(actions.tool ? { tool: (name: string) => actions.tool!(name) } : {}),
      ...(actions.model ? { model: actions.model } : {}),
      ...(v === version ? { warnings } : {}),
    });
    compiled.set(v, result);
    return result;
  };
  return build(definition, version);
}

function invalid(label: string, errors: Problem[], file?: string): WorkflowError {
  const first = errors[0];
  const summary = first ? (file !== undefined ? formatProblemIn(file, first) : formatProblem(first)) : "it has no definition";
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problems)` : "";
  return new WorkflowError(`${label} is invalid: ${summary}${more}`, errors);
}

/** Every workflow version a compiled workflow needs stored: itself and its sub-workflows. */
export function workflowTree(workflow: CompiledWorkflow): CompiledWorkflow[] {
  const out = new Map<string, CompiledWorkflow>();
  const visit = (w: CompiledWorkflow) => {
    if (out.has(w.version)) return;
    out.set(w.version, w);
    for (const child of w.children.values()) visit(child);
  };
  visit(workflow);
  return [...out.values()];
}
