import type { InterruptRecord, RunRecord } from "../../../engine/index.js";
import { hasWords, parseFilter } from "../filter-text.js";
import { clean, inline } from "../text.js";

/** The values an interrupt shows, on one line: `city=Paris budget=1200`. */
export function shownValues(interrupt: InterruptRecord): string {
  return Object.entries(interrupt.request.show ?? {})
    .map(([k, v]) => `${clean(k)}=${inline(v, true, 120)}`)
    .join(" ");
}

/** The keys the queue's filter knows, with their short names: any other `word:` is text. */
export const INTERRUPT_FILTER_KEYS = { workflow: ["workflow", "wf", "w"], node: ["node", "n"], run: ["run", "r"], kind: ["kind", "k"] } as const;

/** The orders the queue offers (`s` moves to the next, `S` turns it round). */
export const INTERRUPT_SORTS = ["age", "workflow", "node", "deadline"] as const;
export type InterruptSortKey = (typeof INTERRUPT_SORTS)[number];
export interface InterruptSort {
  key: InterruptSortKey;
  reversed: boolean;
}
export const DEFAULT_INTERRUPT_SORT: InterruptSort = { key: "age", reversed: false };

/** The queue as the operator left it (its filter and order): what `n`/`N` walk from an interrupt opened there. */
export interface QueueOrder {
  filter: string;
  sort: InterruptSort;
}

export const WHOLE_QUEUE: QueueOrder = { filter: "", sort: DEFAULT_INTERRUPT_SORT };

/**
 * The interrupt `delta` rows from `id` in `rows`, round at the ends; from one not among them (the
 * filter does not keep it), the first (`n`) or the last (`N`). Undefined when there is no other.
 */
export function stepFrom(rows: readonly InterruptRecord[], id: string, delta: 1 | -1): InterruptRecord | undefined {
  const at = rows.findIndex((i) => i.id === id);
  const next = at < 0 ? rows.at(delta > 0 ? 0 : -1) : rows[(at + delta + rows.length) % rows.length];
  return next?.id === id ? undefined : next;
}

const LABELS: Record<InterruptSortKey, readonly [string, string]> = {
  age: ["oldest first", "newest first"],
  workflow: ["workflow, A to Z", "workflow, Z to A"],
  node: ["node, A to Z", "node, Z to A"],
  deadline: ["deadline, soonest first", "deadline, latest first"],
};

export function interruptSortLabel(sort: InterruptSort): string {
  return LABELS[sort.key][sort.reversed ? 1 : 0];
}

/**
 * The queue as shown: the pending interrupts that match the filter (`workflow:`, `node:`, `run:`,
 * `kind:` and free words, found in the question, the values shown as the SHOWS column has them,
 * the node, the run and its workflow), in the order chosen; ties stay oldest first. By deadline,
 * those without one come last either way round: what a timeout is about to answer comes first.
 */
export function interruptRows(all: readonly InterruptRecord[], filterText: string, sort: InterruptSort, runs: ReadonlyMap<string, RunRecord>): InterruptRecord[] {
  const { values, words } = parseFilter(filterText, INTERRUPT_FILTER_KEYS);
  const workflowOf = (i: InterruptRecord) => runs.get(i.runId)?.workflow ?? "";
  const some = (wanted: readonly string[], text: string) => wanted.length === 0 || wanted.some((w) => text.toLowerCase().includes(w));
  const shown = all.filter(
    (i) =>
      some(values.workflow, workflowOf(i)) &&
      some(values.node, i.node) &&
      some(values.run, i.runId) &&
      some(values.kind, i.kind) &&
      hasWords([i.id, i.runId, i.node, i.kind, workflowOf(i), i.request.question ?? "", shownValues(i)].join(" "), words),
  );
  const keyOf = (i: InterruptRecord): string | number | undefined =>
    sort.key === "age" ? i.createdAt : sort.key === "deadline" ? i.deadline?.at : sort.key === "workflow" ? workflowOf(i).toLowerCase() : i.node.toLowerCase();
  const direction = sort.reversed ? -1 : 1;
  const compare = (a: string | number | undefined, b: string | number | undefined) =>
    a === undefined || b === undefined ? Number(a === undefined) - Number(b === undefined) : direction * (a < b ? -1 : a > b ? 1 : 0);
  return shown
    .map((i, at) => ({ i, at, key: keyOf(i) }))
    .sort((a, b) => compare(a.key, b.key) || a.at - b.at)
    .map(({ i }) => i);
}
