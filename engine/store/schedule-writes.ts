import { ConflictError, NotFoundError } from "../errors.js";
import type { ScheduleAdvance, ScheduleRecord } from "./records.js";

// The two writes of a schedule, as the memory and SQLite stores apply them under their lock (the
// Redis store's scripts make the same checks).

/** The schedule `putSchedule` stores in place of `current`, with its next revision; a refusal as a typed error. */
export function scheduleReplacing(current: ScheduleRecord | undefined, record: ScheduleRecord, expectRevision: number | null): ScheduleRecord {
  if (expectRevision === null && current) throw new ConflictError(`schedule ${record.id} already exists`);
  if (expectRevision !== null && !current) throw new NotFoundError("schedule", record.id);
  if (expectRevision !== null && current!.revision !== expectRevision) throw changedMeanwhile(record.id);
  return { ...record, revision: (current?.revision ?? 0) + 1 };
}

/** The schedule `advanceSchedule` stores in place of `current`; undefined when it is gone or its next time moved. */
export function scheduleAdvanced(current: ScheduleRecord | undefined, expectNextAt: number, advance: ScheduleAdvance): ScheduleRecord | undefined {
  if (!current || current.nextAt !== expectNextAt) return undefined;
  return { ...current, ...advance, revision: current.revision + 1 };
}

export function changedMeanwhile(id: string): ConflictError {
  return new ConflictError(`schedule ${id} was changed meanwhile (by a worker firing it, or another operator): read it again`);
}
