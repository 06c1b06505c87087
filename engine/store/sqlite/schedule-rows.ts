import type { ScheduleAdvance, ScheduleRecord } from "../records.js";
import { scheduleAdvanced, scheduleReplacing } from "../schedule-writes.js";
import { parseDoc, parseDocs } from "./rows.js";
import type { Statements } from "./statements.js";

/** The schedules table (schema version 8): synchronous, the writes run inside the store's write transactions. */
export class ScheduleRows {
  constructor(private readonly s: Statements) {}

  put(record: ScheduleRecord, expectRevision: number | null): ScheduleRecord {
    const stored = scheduleReplacing(this.get(record.id), record, expectRevision);
    this.save(stored);
    return stored;
  }

  advance(id: string, expectNextAt: number, advance: ScheduleAdvance): boolean {
    const advanced = scheduleAdvanced(this.get(id), expectNextAt, advance);
    if (advanced) this.save(advanced);
    return advanced !== undefined;
  }

  get(id: string): ScheduleRecord | undefined {
    if (!this.hasTable()) return undefined;
    return parseDoc<ScheduleRecord>(this.s.sql("SELECT doc FROM schedules WHERE id = ?").get(id) as { doc: string } | undefined);
  }

  list(): ScheduleRecord[] {
    if (!this.hasTable()) return [];
    return parseDocs<ScheduleRecord>(this.s.sql("SELECT doc FROM schedules ORDER BY id").all() as { doc: string }[]);
  }

  delete(id: string): boolean {
    return this.s.sql("DELETE FROM schedules WHERE id = ?").run(id).changes > 0;
  }

  private save(record: ScheduleRecord): void {
    this.s.sql("INSERT INTO schedules (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc").run(record.id, JSON.stringify(record));
  }

  /** A store older than the table, opened read-only, has none. */
  private hasTable(): boolean {
    return this.s.sql("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schedules'").get() !== undefined;
  }
}
