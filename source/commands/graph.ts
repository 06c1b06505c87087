import { existsSync } from "node:fs";
import {
  PitwallError,
  StoreError,
  didYouMean,
  inlineSubWorkflows,
  newestFirst,
  renderDot,
  renderGraph,
  renderMermaid,
  type Store,
  type WorkflowDefinition,
} from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { checkedVersion, problemLines } from "../cli/workflow-file.js";

const FORMATS = { text: renderGraph, mermaid: renderMermaid, dot: renderDot } as const;

export const graph = defineCommand({
  name: "graph",
  usage: "graph <workflow.json | run | workflow name | version> [--format text|mermaid|dot]",
  summary: "draw a workflow: nodes, edges, route labels (as text, Mermaid or DOT)",
  details: `Given a file (a path ending in .json, containing a "/", or naming a file here), draws that
workflow; otherwise, from the store, the version a run uses, a stored version (its hash, or the
first 8 or more characters of it), or the newest stored version of a workflow of that name.
--format mermaid prints a Mermaid flowchart (GitHub renders it in Markdown), --format dot a
Graphviz graph (dot -Tsvg); text is the default.
--json prints { "name", "version", "definition" }: the canonical definition with its
sub-workflows inline, so that it validates and loads again as a workflow file.`,
  flags: { format: { type: "string" } },
  args: { min: 1, max: 1 },
  readsOnly: true,
  async run({ args, flags, out, store }) {
    const ref = args[0]!;
    const format = flags.format ?? "text";
    if (!Object.hasOwn(FORMATS, format)) throw new UsageError(`--format ${format}: give text, mermaid or dot`);
    if (flags.format !== undefined && out.json) throw new UsageError("--format draws the graph; --json prints its definition: give one of them");
    let drawn: { definition: WorkflowDefinition; version: string };
    let childOf: (version: string) => Promise<WorkflowDefinition | undefined> | WorkflowDefinition | undefined;
    // A run id has no path separators, no extension and is not a file here.
    if (/\.json$/i.test(ref) || /[\\/]/.test(ref) || existsSync(ref)) {
      const checked = checkedVersion(ref);
      for (const line of problemLines(ref, checked.warnings)) out.note(line);
      drawn = checked;
      childOf = (version) => checked.children?.get(version)?.definition;
    } else {
      const s = await storeFor(ref, store);
      drawn = await storedWorkflow(s, ref);
      childOf = async (version) => (await s.getWorkflow(version))?.definition;
    }
    if (out.json) out.value({ name: drawn.definition.name, version: drawn.version, definition: await inlineSubWorkflows(drawn.definition, childOf) });
    else out.block(FORMATS[format as keyof typeof FORMATS](drawn.definition, drawn.version));
    return EXIT.ok;
  },
});

/** The store to look a name up in; without one, the name was likely a file's, mistyped. */
async function storeFor(ref: string, store: () => Promise<Store>): Promise<Store> {
  try {
    return await store();
  } catch (error) {
    if (!(error instanceof StoreError && / does not exist/.test(error.message))) throw error;
    throw new UsageError(`${ref} is not a file here${fileHint(ref)}, and there is no store to look it up in as a run or stored workflow: ${error.message}`);
  }
}

/** ` (03-parallel.json is: ...)` when the name lacks only its extension. */
function fileHint(ref: string): string {
  return existsSync(`${ref}.json`) ? ` (${ref}.json is: give the name with .json)` : "";
}

/** A run's version, a stored version (by hash or a prefix of 8 or more), or a name's newest version. */
async function storedWorkflow(s: Store, ref: string): Promise<{ definition: WorkflowDefinition; version: string }> {
  const run = await s.getRun(ref);
  if (run) {
    const record = await s.getWorkflow(run.version);
    if (!record) throw new UsageError(`workflow version ${run.version} of run ${ref} is not in the store`);
    return record;
  }
  const stored = await s.listWorkflows();
  const versions = ref.length >= 8 ? stored.filter((w) => w.version.startsWith(ref)) : [];
  if (versions.length > 1) throw new UsageError(`${ref} begins ${versions.length} stored versions (${versions.map((w) => w.version).join(", ")}): give more of it`);
  const named = stored.filter((w) => w.name === ref).sort(newestFirst);
  const found = versions[0] ?? named[0];
  const record = found ? await s.getWorkflow(found.version) : undefined;
  // NOT_FOUND, as every other command says of an unknown run (exit 2 all the same).
  if (!record) {
    const hint = existsSync(`${ref}.json`) ? ` (${ref}.json is a file: give the name with .json)` : didYouMean(ref, new Set(stored.map((w) => w.name))) || " (to draw a workflow file, give its path)";
    throw new PitwallError("NOT_FOUND", `no file, run or stored workflow is named ${ref}${hint}`);
  }
  return record;
}
