import { ValidationError, errorMessage } from "../errors.js";
import type { CheckedChild } from "../graph/check.js";
import { compileWithChildren, workflowTree } from "../graph/load.js";
import type { ActionRegistry, CompiledWorkflow } from "../graph/model.js";
import type { WorkflowRecord } from "../store/records.js";
import { latestVersion } from "../operator/workflow-versions.js";
import type { Store } from "../store/store.js";
import { definitionChange, unrunnableWhy } from "./unrunnable.js";

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
  /** The store's versions as `runnableVersions` last listed them. */
  private stored: Omit<WorkflowRecord, "definition">[] = [];
  /** The newest of each workflow name among `stored`, found once per listing: claims ask for it each time. */
  private newestOf = new Map<string, string | undefined>();
  /** `limits.runsAtOnce` of the stored versions read for it (versions never change). */
  private readonly limitOf = new Map<string, number | undefined>();

  constructor(
    private readonly store: Store,
    private readonly actions: ActionRegistry,
    workflows: readonly CompiledWorkflow[] = [],
  ) {
    for (const workflow of workflows) this.register(workflow);
  }

  /** Code workflows compiled without a model get the loaded one (`createEngine({ model })`). */
  register(workflow: CompiledWorkflow): void {
    const known = this.given.get(workflow.version);
    if (known === workflow) return;
    const differs = known && codeDifference(known, workflow);
    if (differs) {
      // The version is the hash of the graph, not of the code: a run would take whichever came last.
      throw new ValidationError(
        `workflow ${workflow.name} version ${workflow.version} is already registered with other code (${differs}): two workflows with the same graph have the same version, so a run of either would run whichever was registered last; give them different names, or register one`,
      );
    }
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

  /** The names of the workflows registered in code. */
  registeredNames(): string[] {
    return [...new Set([...this.given.values()].map((w) => w.name))];
  }

  /** The latest registered code workflow with this name. */
  byName(name: string): CompiledWorkflow | undefined {
    let found: CompiledWorkflow | undefined;
    for (const w of this.compiled.values()) if (w.name === name) found = w;
    return found;
  }

  async resolve(version: string): Promise<CompiledWorkflow | undefined> {
    const known = this.compiled.get(version);
    if (known || this.unusable.has(version)) return known;
    let record: WorkflowRecord | undefined;
    try {
      record = await this.store.getWorkflow(version);
      if (!record) return undefined;
      const children = new Map<string, CheckedChild>();
      const collect = async (definition: WorkflowRecord["definition"]) => {
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
      const why = errorMessage(error);
      this.unusable.set(version, record ? (this.otherVersionNote(record) ?? unrunnableWhy(record.definition, this.actions, why)) : why);
      return undefined;
    }
  }

  /**
   * A workflow registered in code under the same name, in another version, is the likely cause:
   * its definition changed since the runs of this version started (its graph, or a setting of a
   * node such as its timeout). What the stored version lacks (an action by a node's name) only
   * follows from that.
   */
  private otherVersionNote(stored: WorkflowRecord): string | undefined {
    const registered = [...this.given.values()].filter((w) => w.version !== stored.version && w.name === stored.name);
    const latest = registered.at(-1);
    if (!latest) return undefined;
    const change = definitionChange(stored.definition, latest.definition);
    return `this process has workflow ${stored.name} only in version ${registered.map((w) => w.version).join(", ")}: its definition changed since runs of version ${stored.version} started${change ? ` (${change})` : ""}`;
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
    if (await this.listStored(maxAgeMs)) {
      for (const { version } of this.stored) {
        if (!this.compiled.has(version) && !this.unusable.has(version)) await this.resolve(version);
      }
    }
    return [...this.compiled.keys()];
  }

  /**
   * Lists the store's versions again when the last listing is `maxAgeMs` old (whether it did): what
   * `runsAtOnce` reads each workflow's newest version from, also for a registry that runs only
   * versions of its own choosing.
   */
  protected async listStored(maxAgeMs: number): Promise<boolean> {
    if (Date.now() - this.listedAt < maxAgeMs) return false;
    this.listedAt = Date.now();
    this.stored = await this.store.listWorkflows();
    this.newestOf = new Map();
    return true;
  }

  /**
   * The `limits.runsAtOnce` of the workflows these versions are of, by name, as a claim passes
   * them to the store: each name's limit is its newest stored version's (`latestVersion`, the
   * rule schedules follow), whichever versions this process runs, so that every worker of the
   * store holds a workflow to the same limit; before any version of it is stored, the one last
   * registered in code. A name whose newest version sets none is not limited.
   */
  async runsAtOnce(versions: readonly string[]): Promise<Record<string, number>> {
    const limits: Record<string, number> = {};
    const names = new Set(versions.flatMap((v) => this.compiled.get(v)?.name ?? []));
    for (const name of names) {
      const limit = await this.workflowRunsAtOnce(name);
      if (limit !== undefined) limits[name] = limit;
    }
    return limits;
  }

  /** One workflow's `limits.runsAtOnce`, by the rule of `runsAtOnce` (also of a workflow this process cannot run). */
  async workflowRunsAtOnce(name: string): Promise<number | undefined> {
    if (!this.newestOf.has(name)) this.newestOf.set(name, latestVersion(this.stored, name));
    const newest = this.newestOf.get(name);
    return newest === undefined ? this.byName(name)?.definition.limits.runsAtOnce : await this.storedLimit(newest);
  }

  private async storedLimit(version: string): Promise<number | undefined> {
    if (!this.limitOf.has(version)) {
      const definition = this.compiled.get(version)?.definition ?? (await this.store.getWorkflow(version))?.definition;
      if (!definition) return undefined;
      this.limitOf.set(version, definition.limits.runsAtOnce);
    }
    return this.limitOf.get(version);
  }

  /** The actions (and tools) the loaded modules export. */
  actionNames(): string[] {
    return [...this.actions.names(), ...(this.actions.toolNames?.() ?? [])];
  }

  /** The versions of these workflows and of their sub-workflows (which their runs start), among those this process can run. */
  versionsOf(names: readonly string[]): string[] {
    const versions = new Set<string>();
    for (const w of this.compiled.values()) if (names.includes(w.name)) for (const v of workflowTree(w)) versions.add(v.version);
    return [...versions];
  }

  /** These versions with their workflows' names, as a worker's heartbeat lists what it runs. */
  named(versions: readonly string[]): { name: string; version: string }[] {
    return versions.flatMap((version) => {
      const w = this.compiled.get(version);
      return w ? [{ name: w.name, version }] : [];
    });
  }

  /** Forget the listing so that the next call sees new versions at once. */
  invalidate(): void {
    this.listedAt = 0;
  }
}

/**
 * Where two compiled workflows of one version run functions of different source, if they do. The
 * same factory called twice (a workflow that is also another's sub-workflow) gives functions of
 * the same source, which are taken as the same code.
 */
function codeDifference(a: CompiledWorkflow, b: CompiledWorkflow): string | undefined {
  const differ = (f?: unknown, g?: unknown) => f !== g && String(f) !== String(g);
  for (const [name, node] of a.nodes) {
    const other = b.nodes.get(name);
    // Model, tool and sub-workflow nodes are built from their definitions: only actions and routers are the user's code.
    if (node.definition.kind === "action" && differ(node.run, other?.run)) return `node ${name}'s function differs`;
    if (differ(node.router, other?.router)) return `node ${name}'s router differs`;
  }
  return undefined;
}
