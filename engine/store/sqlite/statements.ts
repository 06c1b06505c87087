import type Database from "better-sqlite3";

export type Param = string | number | null;

/**
 * The store's prepared statements, by their SQL text: each is prepared on first use and reused
 * (a fixed text once, a filtered listing once per shape of filter).
 */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /**
   * Runs `fn`'s reads in one transaction, so that they all see the store as it was at its first
   * read: between two statements outside a transaction, another process may commit.
   */
  consistent<T>(fn: () => T): T {
    return this.db.transaction(fn)();
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
