import { RUN_STATUSES, type RunRecord, type RunStatus } from "../../../engine/index.js";
import { hasWords, parseFilter } from "../filter-text.js";
import { ranMs } from "../../text/run-time.js";

/** The keys the runs filter knows, with their short names: any other `word:` is text. */
export const RUN_FILTER_KEYS = { status: ["status", "s"], workflow: ["workflow", "wf", "w"] } as const;

/** A parsed `/` filter: every part must match. */
export interface RunFilter {
  statuses: RunStatus[];
  /** Status values that name no status (`status:runpaused`): no run matches them. */
  unknownStatuses: string[];
  workflows: string[];
  words: string[];
}

/** `status:paused,failed workflow:travel hotel` → statuses, workflow names, free words. */
export function parseRunFilter(text: string): RunFilter {
  const { values, words } = parseFilter(text, RUN_FILTER_KEYS);
  const filter: RunFilter = { statuses: [], unknownStatuses: [], workflows: values.workflow, words };
  for (const v of values.status) {
    const status = RUN_STATUSES.find((s) => s.startsWith(v));
    if (status) filter.statuses.push(status);
    else filter.unknownStatuses.push(v);
  }
  return filter;
}

export function isEmptyFilter(filter: RunFilter): boolean {
  return filter.statuses.length === 0 && filter.unknownStatuses.length === 0 && filter.workflows.length === 0 && filter.words.length === 0;
}

/** Whether `run` matches; free words are looked for in its id, workflow, status, tags (`ticket=t-123`) and `shown` (what its NOW column says). */
export function matchesRun(run: RunRecord, filter: RunFilter, shown = ""): boolean {
  if (filter.unknownStatuses.length > 0) return false;
  if (filter.statuses.length > 0 && !filter.statuses.includes(run.status)) return false;
  if (filter.workflows.length > 0 && !filter.workflows.some((w) => run.workflow.toLowerCase().includes(w))) return false;
  if (filter.words.length === 0) return true;
  const tags = Object.entries(run.tags ?? {}).map(([name, value]) => `${name}=${value}`);
  return hasWords([run.id, run.workflow, run.status, run.reason ?? "", run.error?.message ?? "", ...run.current, ...tags, shown].join(" "), filter.words);
}

/** The orders the runs list offers (`s` moves to the next, `S` turns it round). */
export const RUN_SORTS = ["activity", "age", "status", "workflow", "duration", "pending"] as const;
export type RunSortKey = (typeof RUN_SORTS)[number];

export interface RunSort {
  key: RunSortKey;
  reversed: boolean;
}

export const DEFAULT_SORT: RunSort = { key: "activity", reversed: false };

/** Runs that need a person first, finished ones last. */
const STATUS_RANK: Record<RunStatus, number> = { paused: 0, failed: 1, running: 2, queued: 3, canceled: 4, succeeded: 5 };

/** How each order reads in the list's title, as given and turned round. */
export const SORT_LABELS: Record<RunSortKey, readonly [string, string]> = {
  activity: ["recent activity", "least recent activity"],
  age: ["newest", "oldest"],
  status: ["status, paused and failed first", "status, succeeded first"],
  workflow: ["workflow, A to Z", "workflow, Z to A"],
  duration: ["longest", "shortest"],
  pending: ["most pending interrupts", "fewest pending interrupts"],
};

export function sortLabel(sort: RunSort): string {
  return SORT_LABELS[sort.key][sort.reversed ? 1 : 0];
}

/** The key a run sorts by, smallest first; ties go to the most recent activity. */
function sortValue(run: RunRecord, key: RunSortKey, now: number, pending: number, pausedAt: ReadonlyMap<string, number>): number | string {
  switch (key) {
    case "activity":
      return -run.updatedAt;
    case "age":
      return -run.createdAt;
    case "status":
      return STATUS_RANK[run.status];
    case "workflow":
      return run.workflow.toLowerCase();
    case "duration":
      return -(ranMs(run, now, pausedAt.get(run.id)) ?? 0);
    case "pending":
      return -pending;
  }
}

export interface RunRow {
  run: RunRecord;
  depth: number;
  /** Drawn before the id: `├─ `, `│  └─ `... */
  prefix: string;
  children: number;
  folded: boolean;
  /** Pending interrupts of the runs folded away below this one (a paused sub-workflow's question). */
  pendingBelow: number;
  /** Shown only because a child matched the filter. */
  context: boolean;
}

/**
 * The rows of the runs list: top-level runs in the order chosen (most recent activity first
 * unless another is), each followed by its
 * sub-workflow and forked runs (oldest first) as a tree that can be folded. With a filter,
 * matching runs are shown with the ancestors that place them in their tree.
 */
export function runRows(
  all: Iterable<RunRecord>,
  filter: RunFilter,
  folded: ReadonlySet<string>,
  sort: RunSort = DEFAULT_SORT,
  now = Date.now(),
  pausedAt: ReadonlyMap<string, number> = new Map(),
  /** What a run's NOW column says, for the filter's free words. */
  describe: (run: RunRecord) => string = () => "",
): RunRow[] {
  const matches = (run: RunRecord) => matchesRun(run, filter, filter.words.length > 0 ? describe(run) : "");
  const byId = new Map<string, RunRecord>();
  for (const run of all) byId.set(run.id, run);
  const parentOf = (run: RunRecord) => {
    const id = run.parentRunId ?? run.forkOf?.runId ?? null;
    return id !== null && id !== run.id && byId.has(id) ? id : null;
  };
  let shown: Set<string> | undefined;
  const context = new Set<string>();
  if (!isEmptyFilter(filter)) {
    shown = new Set();
    for (const run of byId.values()) {
      if (!matches(run)) continue;
      shown.add(run.id);
      for (let p = parentOf(run), guard = 0; p !== null && guard < 64; p = parentOf(byId.get(p)!), guard++) {
        if (!shown.has(p)) context.add(p);
        shown.add(p);
      }
    }
    for (const id of shown) if (context.has(id) && matches(byId.get(id)!)) context.delete(id);
  }
  const children = new Map<string, RunRecord[]>();
  const roots: RunRecord[] = [];
  for (const run of byId.values()) {
    if (shown && !shown.has(run.id)) continue;
    const parent = parentOf(run);
    if (parent === null) roots.push(run);
    else children.set(parent, [...(children.get(parent) ?? []), run]);
  }
  const pendingUnder = (id: string, depth = 0): number =>
    depth > 64 ? 0 : (children.get(id) ?? []).reduce((sum, kid) => sum + kid.pendingInterrupts + pendingUnder(kid.id, depth + 1), 0);
  const keyOf = new Map(roots.map((run) => [run.id, sortValue(run, sort.key, now, run.pendingInterrupts + pendingUnder(run.id), pausedAt)]));
  const direction = sort.reversed ? -1 : 1;
  roots.sort((a, b) => {
    const [x, y] = [keyOf.get(a.id)!, keyOf.get(b.id)!];
    const order = x < y ? -1 : x > y ? 1 : 0;
    return direction * order || b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1);
  });
  const rows: RunRow[] = [];
  const visit = (run: RunRecord, depth: number, lead: string, last: boolean, seen: Set<string>) => {
    const kids = (children.get(run.id) ?? []).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    const isFolded = folded.has(run.id);
    rows.push({
      run,
      depth,
      prefix: depth === 0 ? "" : `${lead}${last ? "└─ " : "├─ "}`,
      children: kids.length,
      folded: isFolded,
      pendingBelow: isFolded ? pendingUnder(run.id) : 0,
      context: context.has(run.id),
    });
    if (isFolded || seen.has(run.id)) return;
    seen.add(run.id);
    kids.forEach((kid, i) => visit(kid, depth + 1, depth === 0 ? "" : `${lead}${last ? "   " : "│  "}`, i === kids.length - 1, seen));
  };
  for (const root of roots) visit(root, 0, "", true, new Set());
  return rows;
}
