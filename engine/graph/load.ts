import { realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { WorkflowError, fileProblem } from "../errors.js";
import { readTextFile } from "../text-file.js";
import { checkWorkflow, type CheckResult, type CheckedChild } from "./check.js";
import { isPlainObject } from "../state/ops.js";
import { compileDefinition } from "./compile.js";
import type { WorkflowDefinition } from "./definition.js";
import type { ActionRegistry, CompiledWorkflow } from "./model.js";
import { ProblemList, formatProblem, formatProblemIn, moreProblems, type Occurrences, type Problem } from "./problems.js";
import { locateProblems, parseWorkflowText, type LostDefinition } from "./parse-json.js";
import { TreeNames, placeOf, shownPath, type Place } from "./tree-names.js";
import { missingAction } from "./actions.js";
import { jsonPath } from "../state/schema.js";

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
  const file = options.file !== undefined ? resolve(options.file) : undefined;
  try {
    const { places: _, ...result } = checkText(text, options, { stack: file ? [realFile(file)] : [], ...(file ? { file } : {}), prefix: [], files: new Map() });
    return result;
  } catch (error) {
    // Parsing and checking recurse into the document: a file nested thousands deep exhausts the stack.
    if (!(error instanceof RangeError)) throw error;
    const problems = new ProblemList();
    problems.error([], "BAD_JSON", "the workflow nests too deeply to read (values inside values thousands of levels down)");
    return { problems: problems.items, children: new Map() };
  }
}

/** Where a document being checked is. */
interface Where {
  /** The files being checked (symbolic links resolved), outermost first: a sub-workflow that leads back to one is a cycle. */
  stack: string[];
  /** The file the document is in (resolved), when it was read from one. */
  file?: string;
  /** The document's path in that file: [] for the file's own workflow, else an inline sub-workflow's. */
  prefix: (string | number)[];
  /** Which definitions along that path, of nodes written more than once, the document is in (else the last). */
  within?: Occurrences;
  /** The definitions of nodes written twice in that file that a later one replaced, of any of its workflows. */
  lost?: readonly LostDefinition[];
  /**
   * The sub-workflow files of the tree checked so far, by path as resolved (undefined: invalid):
   * a file used again, anywhere in the tree, is that one workflow, whose problems were said at its first use.
   */
  files: Map<string, CheckedTree | undefined>;
}

/** A document's check, with each workflow of its tree (itself when valid, and its sub-workflows) by version. */
interface CheckedTree extends CheckResult {
  places: Map<string, Place>;
}

function checkText(text: string, options: CheckFileOptions, where: Where): CheckedTree {
  const problems = new ProblemList();
  const parsed = parseWorkflowText(text, problems);
  if (parsed === undefined) return { problems: problems.items, children: new Map(), places: new Map() };
  const result = checkValue(parsed.value, options, { ...where, lost: parsed.lostNodes }, problems);
  locateProblems(text, problems);
  return result;
}

function checkValue(value: unknown, options: CheckFileOptions, where: Where, problems = new ProblemList()): CheckedTree {
  const children = new Map<string, CheckedChild>();
  const self = placeOf(where);
  const names = new TreeNames(isPlainObject(value) ? value.name : undefined, self);
  const result = checkWorkflow(
    value,
    {
      ...(options.actions ? { missingAction: (name: string) => missingAction(options.actions!, name) } : {}),
      ...(options.actions?.tool ? { hasTool: (name: string) => options.actions!.tool!(name) !== undefined } : {}),
      lostNodes: (where.lost ?? []).filter((l) => jsonPath(l.workflow) === jsonPath(where.prefix) && JSON.stringify(l.within ?? []) === JSON.stringify(where.within ?? [])),
      resolveChild: (ref, path, list, within = []) => {
        const child = loadChild(ref, options, where, path, list, within);
        if (!child?.definition) return undefined;
        for (const [v, c] of child.children) children.set(v, c);
        children.set(child.version!, { definition: child.definition, version: child.version! });
        names.add(child.places, path, list);
        return { definition: child.definition, version: child.version! };
      },
    },
    problems,
  );
  for (const [v, c] of children) result.children.set(v, c);
  const places = new Map(names.places);
  if (result.definition && result.version) places.set(result.version, { name: result.definition.name, place: self });
  return { ...result, places };
}

const CYCLE = "sub-workflows include each other";

function loadChild(
  ref: string | Record<string, unknown>,
  options: CheckFileOptions,
  where: Where,
  path: (string | number)[],
  problems: ProblemList,
  within: Occurrences,
): CheckedTree | undefined {
  if (isPlainObject(ref)) {
    // Part of the same file: its problems are said where they are in it, with their whole paths.
    const own = new ProblemList();
    const inner = [...(where.within ?? []), ...within.map(([at, n]) => [at + where.prefix.length, n] as const)];
    const result = checkValue(ref, options, { ...where, prefix: [...where.prefix, ...path], within: inner }, own);
    problems.adopt(own, { prefix: path });
    return own.hasErrors ? undefined : result;
  }
  const file = resolve(options.baseDir ?? process.cwd(), ref);
  const real = realFile(file);
  if (where.stack.includes(real)) {
    const cycle = [...where.stack.slice(where.stack.indexOf(real)), real].map(shownPath);
    problems.error(path, "BAD_SUBGRAPH", `${CYCLE}: ${cycle.join(" → ")}`);
    return undefined;
  }
  if (where.files.has(file)) return where.files.get(file);
  const tree = checkFile(file, options, where, path, problems);
  where.files.set(file, tree);
  return tree;
}

/** A sub-workflow file's first use in the tree: its check, its problems said at the node that uses it. */
function checkFile(file: string, options: CheckFileOptions, where: Where, path: (string | number)[], problems: ProblemList): CheckedTree | undefined {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (error) {
    problems.error(path, "BAD_SUBGRAPH", `cannot read sub-workflow ${shownPath(file)}: ${fileProblem(error)}`);
    return undefined;
  }
  const result = checkText(text, { ...options, baseDir: dirname(file) }, { stack: [...where.stack, realFile(file)], file, prefix: [], files: where.files });
  const errors = result.problems.filter((p) => p.severity === "error");
  for (const p of result.problems) {
    const quoted = `in sub-workflow ${formatProblemIn(shownPath(file), p)}`;
    // A warning keeps its code: it does not make the sub-workflow bad.
    if (p.severity === "warning") problems.warning(path, p.code, quoted);
    // A cycle is said once, whole, rather than wrapped once per file it goes through.
    else if (p.code === "BAD_SUBGRAPH" && p.message.startsWith(CYCLE)) problems.error(path, "BAD_SUBGRAPH", p.message);
    else problems.error(path, "BAD_SUBGRAPH", quoted);
  }
  return errors.length === 0 ? result : undefined;
}

/**
 * A file with symbolic links resolved, by which two paths are one file (a link to a file it is
 * reached from is a cycle); as given when it cannot be (reading it then says why).
 */
function realFile(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
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
  return compileChecked(checkValue(value, { actions, ...options }, { stack: [], prefix: [], files: new Map() }), actions, "workflow");
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
  const more = moreProblems(errors.length, [...(file !== undefined ? [`pitwall validate ${file}`] : []), "the WorkflowError's problems"]);
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
