import type Database from "better-sqlite3";

export type Param = string | number | null;

/**
 * The store's prepared statements, by their SQL text: each is prepared on first use and reused
 * (a fixed text once, a filtered listing once per shape of filter).
 */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  /** Columns found: a column is never dropped, but one missing is looked for again (`hasColumn`). */
  private readonly columns = new Set<string>();

  constructor(private readonly db: Database.Database) {}

  /**
   * Runs `fn`'s reads in one transaction, so that they all see the store as it was at its first
   * read: between two statements outside a transaction, another process may commit.
   */
  consistent<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /**
   * Whether a table has a column: not in a store of an earlier schema version opened read-only,
   * until a process that writes upgrades it (asked again each time until then).
   */
  hasColumn(table: string, column: string): boolean {
    const name = `${table}.${column}`;
    if (this.columns.has(name)) return true;
    if (this.sql("SELECT 1 FROM pragma_table_info(?) WHERE name = ?").get(table, column) === undefined) return false;
    this.columns.add(name);
    return true;
  }

  sql(text: string): Database.Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }
}

/**
 * Checkpoints, tasks and events name their run by its integer key (schema version 3): statements
 * find it from the run id they are given, and rows read back name the run by that id again.
 */
export const RUN_KEY = "(SELECT key FROM runs WHERE id = :run_id)";

export function whereClause(where: string[]): string {
  return where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
}
