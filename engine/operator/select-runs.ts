import type { RunRecord, RunStatus } from "../store/records.js";
import { leaseRanOut, onVersion } from "../store/rules.js";
import type { Store } from "../store/store.js";
import { hasTags, type RunTags } from "../tags.js";
import { runDescendants } from "./descendants.js";

/** Which runs a listing or a batch of commands is about: each field given narrows them. */
export interface RunSelection {
  status?: readonly RunStatus[];
  /** Runs of any of these workflows. */
  workflows?: readonly string[];
  /** Runs tagged with each of these. */
  tags?: RunTags;
  /** Runs on a version that starts with any of these (a version's first characters, as listings print it: `1a2b3c4d`). */
  versions?: readonly string[];
  /** The runs made from this run (its forks and continuations, theirs in turn: `runDescendants`). */
  descendantsOf?: string;
  /** Running runs whose lease ran out: their worker is gone or stalled, and none took them over yet. */
  orphaned?: boolean;
}

/** Whether a selection narrows anything: a batch refuses one that would act on every run. */
export function selects(selection: RunSelection): boolean {
  return (selection.status?.length ?? 0) > 0 || (selection.workflows?.length ?? 0) > 0 || (selection.versions?.length ?? 0) > 0 || selection.tags !== undefined || selection.descendantsOf !== undefined || selection.orphaned === true;
}

/**
 * The runs a selection names, most recently updated first, at most `limit`; `more` when there are
 * others beyond it. The store filters by one workflow at a time: several are listed each, then
 * merged.
 */
export async function selectRuns(store: Store, selection: RunSelection, limit: number): Promise<{ runs: RunRecord[]; more: boolean }> {
  const statuses = selection.orphaned ? (["running"] as RunStatus[]) : [...(selection.status ?? [])];
  const workflows = [...new Set(selection.workflows ?? [])];
  const versions = selection.versions?.length ? [...new Set(selection.versions)] : undefined;
  const filter = {
    ...(selection.tags ? { tags: selection.tags } : {}),
    ...(versions ? { versions } : {}),
    ...(statuses.length > 0 ? { status: statuses } : {}),
    // Orphans are picked out of every running run; the limit applies to what is left.
    limit: selection.orphaned ? 10_000 : limit,
  };
  const pages =
    selection.descendantsOf !== undefined
      ? [{ runs: (await runDescendants(store, selection.descendantsOf)).filter((r) => (statuses.length === 0 || statuses.includes(r.status)) && (workflows.length === 0 || workflows.includes(r.workflow)) && hasTags(r, selection.tags) && onVersion(r, versions)), nextCursor: undefined }]
      : await Promise.all(workflows.length === 0 ? [store.listRuns(filter)] : workflows.map((workflow) => store.listRuns({ ...filter, workflow })));
  const now = Date.now();
  const found = pages
    .flatMap((p) => p.runs)
    .filter((r) => !selection.orphaned || leaseRanOut(r, now))
    .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1));
  return { runs: found.slice(0, limit), more: found.length > limit || (!selection.orphaned && pages.some((p) => p.nextCursor !== undefined)) };
}
