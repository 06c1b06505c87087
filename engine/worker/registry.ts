import { errorMessage } from "../errors.js";
import type { CheckedChild } from "../graph/check.js";
import { compileWithChildren, workflowTree } from "../graph/load.js";
import type { ActionRegistry, CompiledWorkflow } from "../graph/model.js";
import type { Store } from "../store/store.js";

/**
 * The workflows a process can execute: those registered in code, and any stored version whose
 * actions all exist in the loaded actions modules. The store keeps every version a run used,
 * so a worker can run a JSON workflow it never saw as a file.
 */
export class WorkflowRegistry {
  private readonly compiled = new Map<string, CompiledWorkflow>();
  /** Stored versions this process cannot run, with why. */
  private readonly unusable = new Map<string, string>();
  private listedAt = 0;

  constructor(
    private readonly store: Store,
    private readonly actions: ActionRegistry,
    workflows: readonly CompiledWorkflow[] = [],
  ) {
    for (const workflow of workflows) this.register(workflow);
  }

  /** Code workflows compiled without a model get the loaded one (`createEngine({ model })`). */
  register(workflow: CompiledWorkflow): void {
    if (this.given.get(workflow.version) === workflow) return;
    this.given.set(workflow.version, workflow);
    const model = this.actions.model;
    this.add(model ? workflow.withModel(model) : workflow);
  }

  private add(workflow: CompiledWorkflow): void {
    for (const w of workflowTree(workflow)) {
      this.compiled.set(w.version, w);
      this.unusable.delete(w.version);
    }
  }

  /** What `register` was given last per version: registering it again changes nothing. */
  private readonly given = new Map<string, CompiledWorkflow>();

  /** The latest registered code workflow with this name. */
  byName(name: string): CompiledWorkflow | undefined {
    let found: CompiledWorkflow | undefined;
    for (const w of this.compiled.values()) if (w.name === name) found = w;
    return found;
  }

  async resolve(version: string): Promise<CompiledWorkflow | undefined> {
    const known = this.compiled.get(version);
    if (known || this.unusable.has(version)) return known;
    try {
      const record = await this.store.getWorkflow(version);
      if (!record) return undefined;
      const children = new Map<string, CheckedChild>();
      const collect = async (definition: typeof record.definition) => {
        for (const node of Object.values(definition.nodes)) {
          if (node.kind !== "subgraph" || children.has(node.workflow as string)) continue;
          const child = await this.store.getWorkflow(node.workflow as string);
          if (!child) throw new Error(`sub-workflow version ${String(node.workflow)} is not in the store`);
          children.set(child.version, { definition: child.definition, version: child.version });
          await collect(child.definition);
        }
      };
      await collect(record.definition);
      const workflow = compileWithChildren(record.definition, version, this.actions, children);
      this.add(workflow);
      return workflow;
    } catch (error) {
      this.unusable.set(version, errorMessage(error));
      return undefined;
    }
  }

  /** Whether this version was already looked at (runnable or not). */
  knows(version: string): boolean {
    return this.compiled.has(version) || this.unusable.has(version);
  }

  /** Why a stored version cannot run here, if it cannot. */
  whyUnusable(version: string): string | undefined {
    return this.unusable.get(version);
  }

  /** Every version this process can run, refreshed from the store at most once per `maxAgeMs`. */
  async runnableVersions(maxAgeMs = 1000): Promise<string[]> {
    if (Date.now() - this.listedAt >= maxAgeMs) {
      this.listedAt = Date.now();
      for (const { version } of await this.store.listWorkflows()) {
        if (!this.compiled.has(version) && !this.unusable.has(version)) await this.resolve(version);
      }
    }
    return [...this.compiled.keys()];
  }

  /** Forget the listing so that the next call sees new versions at once. */
  invalidate(): void {
    this.listedAt = 0;
  }
}
