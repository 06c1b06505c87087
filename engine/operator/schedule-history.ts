import { canonicalJson } from "../graph/canonical.js";
import { SCHEDULE_HISTORY_KEPT, type ScheduleChange, type ScheduleRecord } from "../store/schedule-records.js";

/** The fields an operator sets: the name a change of each is said by (the command line's flag), and its value in words. */
const SAID: { [K in keyof ScheduleRecord]?: [name: string, said: (s: ScheduleRecord) => string] } = {
  workflow: ["workflow", (s) => s.workflow],
  version: ["version", (s) => s.version?.slice(0, 12) ?? "latest"],
  cron: ["cron", (s) => s.cron],
  timezone: ["timezone", (s) => s.timezone],
  // Cut short: a schedule keeps twenty changes, and an input may be long.
  input: ["input", (s) => cut(JSON.stringify(s.input))],
  overlap: ["overlap", (s) => s.overlap],
  catchUp: ["catch-up", (s) => s.catchUp],
  tags: ["tags", (s) => (s.tags ? Object.entries(s.tags).map(([k, v]) => `${k}=${v}`).join(" ") : "none")],
  jitterSeconds: ["jitter", (s) => `${s.jitterSeconds ?? 0}s`],
};

/**
 * What an operator's change did to a schedule, in words: `paused`, `resumed`, each field moved
 * (`cron 0 3 * * * → 0 4 * * *; overlap skip → allow`); empty when it changed none of them.
 */
export function scheduleChangeText(before: ScheduleRecord, after: ScheduleRecord): string {
  const moves = Object.entries(SAID)
    .filter(([key]) => canonicalJson(before[key as keyof ScheduleRecord] ?? null) !== canonicalJson(after[key as keyof ScheduleRecord] ?? null))
    .map(([, [name, said]]) => `${name} ${said(before)} → ${said(after)}`);
  const paused = before.paused === after.paused ? [] : [after.paused ? "paused" : "resumed"];
  return [...paused, ...moves].join("; ");
}

/** The schedule with one more change in its history (the oldest dropped past what it keeps). */
export function withChange(record: ScheduleRecord, change: ScheduleChange): ScheduleRecord {
  return { ...record, history: [...(record.history ?? []), change].slice(-SCHEDULE_HISTORY_KEPT) };
}

function cut(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}
