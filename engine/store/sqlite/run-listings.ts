import { RUN_STATUSES, type RunRecord, type RunStatus } from "../records.js";
import { soonestFirst } from "../listing.js";
import type { Deadline } from "../store.js";
import { runDocColumns, runRecord, type RunDocRow } from "./rows.js";
import { whereClause, type Param, type Statements } from "./statements.js";

/** What `RunListings.listRuns` selects: `before` is a page's cursor (the last run of the page before). */
interface RunListing {
  statuses?: RunStatus[];
  workflow?: string;
  parentRunId?: string | null;
  tags?: Record<string, string>;
  versions?: readonly string[];
  before?: { updatedAt: number; id: string };
  limit: number;
}

/** The store's listings across runs: runs page by page, and the deadlines workers act on. */
export class RunListings {
  constructor(private readonly s: Statements) {}

  /**
   * The newest runs first. Runs of several statuses are read a status at a time, each along the
   * status index in its order from the cursor on, and merged: read together, SQLite sorted every
   * run of those statuses past the cursor for each page, and a listing of them all page by page
   * cost in proportion to the square of their number. With no status asked for, that is every
   * status (the store has no index by update time alone since schema version 11), but for the
   * children of one run, read along their parent's index. Only the page's runs are read whole:
   * the statuses' candidates are their keys, from the status index alone where no other filter
   * needs the row. All in one read transaction: a run whose status changed in between is listed
   * once, as it was or as it is.
   */
  listRuns(filter: RunListing): RunRecord[] {
    const statuses = filter.statuses ?? (typeof filter.parentRunId === "string" ? [] : RUN_STATUSES);
    if (statuses.length <= 1) return this.runRows(filter, runDocColumns(this.s)).map(runRecord);
    return this.s.consistent(() => {
      const candidates = statuses.flatMap((status) => this.runRows({ ...filter, statuses: [status] }, "updated_at, id"));
      candidates.sort((a, b) => b.updated_at - a.updated_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      const ids = candidates.slice(0, filter.limit).map((c) => c.id);
      const rows = new Map(
        (this.s.sql(`SELECT id, ${runDocColumns(this.s)} FROM runs WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as (RunDocRow & { id: string })[]).map((row) => [
          row.id,
          row,
        ]),
      );
      return ids.map((id) => runRecord(rows.get(id)!));
    });
  }

  /** The runs' rows that `filter` selects, newest first: their documents (`columns`), or only their keys. */
  private runRows(filter: RunListing, columns: "updated_at, id"): { updated_at: number; id: string }[];
  private runRows(filter: RunListing, columns: string): RunDocRow[];
  private runRows(filter: RunListing, columns: string): (RunDocRow | { updated_at: number; id: string })[] {
    const where: string[] = [];
    const params: Param[] = [];
    if (filter.statuses) {
      where.push(`status IN (${filter.statuses.map(() => "?").join(", ")})`);
      params.push(...filter.statuses);
    }
    if (filter.workflow !== undefined) {
      where.push("workflow = ?");
      params.push(filter.workflow);
    }
    if (filter.parentRunId === null) where.push("parent_run_id IS NULL");
    else if (filter.parentRunId !== undefined) {
      where.push("parent_run_id = ?");
      params.push(filter.parentRunId);
    }
    // Tags are not indexed: the other filters (and the order) narrow the runs read first.
    for (const [key, value] of Object.entries(filter.tags ?? {})) {
      where.push("json_extract(doc, ?) = ?");
      params.push(`$.tags.${JSON.stringify(key)}`, value);
    }
    // Read from the run's own column, not its document; a prefix taken by length, so that no character of it is a pattern.
    if (filter.versions) {
      where.push(filter.versions.length === 0 ? "0" : `(${filter.versions.map(() => "substr(version, 1, ?) = ?").join(" OR ")})`);
      for (const prefix of filter.versions) params.push(prefix.length, prefix);
    }
    if (filter.before) {
      // A row value, which an index search can start from (an OR of its parts cannot).
      where.push("(updated_at, id) < (?, ?)");
      params.push(filter.before.updatedAt, filter.before.id);
    }
    const text = `SELECT ${columns} FROM runs ${whereClause(where)} ORDER BY updated_at DESC, id DESC LIMIT ?`;
    return this.s.sql(text).all(...params, filter.limit) as (RunDocRow | { updated_at: number; id: string })[];
  }

  /**
   * The deadlines of the runs not ended and of the pending interrupts (`Store.listDeadlines`), each
   * read along its partial index (schema version 10); from the documents in a store older than
   * that, opened read-only.
   */
  listDeadlines(): Deadline[] {
    const indexed = this.s.hasColumn("runs", "deadline_at");
    // INDEXED BY: the planner would read the pending interrupts along their status index instead.
    const [runs, interrupts] = (
      indexed
        ? [
            "SELECT id, deadline_at AS at FROM runs INDEXED BY runs_by_deadline WHERE deadline_at IS NOT NULL AND status NOT IN ('succeeded', 'failed', 'canceled')",
            "SELECT id, deadline_at AS at FROM interrupts INDEXED BY interrupts_by_deadline WHERE deadline_at IS NOT NULL AND status = 'pending'",
          ]
        : [
            "SELECT id, doc ->> '$.deadlineAt' AS at FROM runs WHERE at IS NOT NULL AND status NOT IN ('succeeded', 'failed', 'canceled')",
            "SELECT id, doc ->> '$.deadline.at' AS at FROM interrupts WHERE at IS NOT NULL AND status = 'pending'",
          ]
    ).map((text) => this.s.sql(text).all() as { id: string; at: number }[]) as [{ id: string; at: number }[], { id: string; at: number }[]];
    return [...runs.map((r): Deadline => ({ kind: "run", id: r.id, at: r.at })), ...interrupts.map((i): Deadline => ({ kind: "interrupt", id: i.id, at: i.at }))].sort(soonestFirst);
  }
}
