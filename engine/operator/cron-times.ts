import { Cron } from "croner";
import { ValidationError } from "../errors.js";
import { didYouMean } from "../suggest.js";

// Cron times by croner: five fields or a nickname (@hourly, @daily, @weekly, @monthly, @yearly),
// read in an IANA time zone. Across clock changes the times are found on the zone's wall clock and
// then placed: a time the clocks skip fires at the first instant after the gap (several skipped
// times of one night fire there once), one they repeat fires once, at its first pass. (croner's own
// zone handling finds no time at all on a night whose gap holds several.)

function cronOf(cron: string, timezone: string): Cron {
  return new Cron(cron, { paused: true, mode: "5-part", timezone });
}

const NICKNAMES = ["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"];

/** Refuses a cron expression croner cannot read, naming it and what is wrong with it. */
export function checkCron(cron: unknown): string {
  if (typeof cron !== "string" || cron.trim() === "") throw new ValidationError("cron: give five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly");
  const fields = cron.trim().split(/\s+/).length;
  const nickname = /^@\w+/.exec(cron.trim())?.[0];
  if (nickname !== undefined && !NICKNAMES.includes(nickname.toLowerCase())) {
    throw new ValidationError(`cron ${JSON.stringify(cron)}: ${nickname} is not a nickname pitwall reads; give five fields (minute hour day-of-month month day-of-week) or one of ${NICKNAMES.join(", ")}${everyInstead(cron.trim())}`);
  }
  if (nickname !== undefined && fields > 1) throw new ValidationError(`cron ${JSON.stringify(cron)}: ${nickname} stands alone; give it without the fields after it, or five fields`);
  if (nickname === undefined && fields !== 5) throw new ValidationError(`cron ${JSON.stringify(cron)}: give five fields (minute hour day-of-month month day-of-week), not ${fields}`);
  try {
    cronOf(cron.trim(), "UTC");
  } catch (error) {
    const why = (error as Error).message.replace(/^Cron\w*:\s*/, "");
    throw new ValidationError(`cron ${JSON.stringify(cron)}: ${why.charAt(0).toLowerCase()}${why.slice(1)}`);
  }
  return cron.trim();
}

/** For `@every N` of minutes or hours, the five fields that say it, when a cron can: steps that divide the hour or the day. */
function everyInstead(cron: string): string {
  const every = /^@every\s+(\d+)\s*(m|min|minutes?|h|hours?)$/i.exec(cron);
  if (!every) return "";
  const n = Number(every[1]);
  const hours = every[2]!.toLowerCase().startsWith("h");
  const fields = hours ? (n === 24 ? "0 0 * * *" : n > 0 && 24 % n === 0 ? `0 */${n} * * *` : undefined) : n === 60 ? "0 * * * *" : n > 0 && 60 % n === 0 ? `*/${n} * * * *` : n > 60 && n % 60 === 0 && 24 % (n / 60) === 0 ? `0 */${n / 60} * * *` : undefined;
  const length = `${n} ${hours ? "hours" : "minutes"}`;
  return fields ? ` (every ${length}: ${fields})` : ` (every ${length} is no cron: its steps must divide the ${hours ? "day" : "hour"}; a workflow that loops through a wait node repeats at any length)`;
}

/** Refuses a time zone that is not an IANA name this Node knows, with the name likely meant. */
export function checkTimezone(timezone: unknown): string {
  if (typeof timezone !== "string" || timezone === "") throw new ValidationError("timezone: give an IANA name such as UTC or Europe/Berlin");
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new ValidationError(`timezone ${JSON.stringify(timezone)} is not an IANA time zone${didYouMean(timezone, Intl.supportedValuesOf("timeZone"))} (e.g. UTC, Europe/Berlin, America/New_York)`);
  }
  return timezone;
}

/**
 * The first time of `cron` (in `timezone`) after `after` (ms); null when it has none. A wall-clock
 * time whose first pass is behind `after` (`after` falls in an hour the clocks repeat) is not
 * taken again at its second pass: each time fires once, however late it is looked for.
 */
export function nextCronTime(cron: string, timezone: string, after: number): number | null {
  const times = cronOf(cron, "UTC");
  let from = wallClock(after, timezone);
  // A repeated hour holds at most sixty of a cron's times.
  for (let skipped = 0; skipped <= 60; skipped++) {
    const wall = times.nextRun(new Date(from))?.getTime();
    if (wall === undefined) return null;
    const first = placed(wall, timezone, wall - 2 * DAY);
    if (first > after) return first;
    from = wall;
  }
  return null;
}

/** The shortest time between two of `cron`'s times on the wall clock, of the next hundred (clock changes aside). */
export function shortestCronGap(cron: string): { ms: number; from: number; to: number } | undefined {
  const times = cronOf(cron, "UTC");
  let shortest: { ms: number; from: number; to: number } | undefined;
  let at = times.nextRun(new Date())?.getTime();
  for (let i = 0; i < 100 && at !== undefined; i++) {
    const next = times.nextRun(new Date(at))?.getTime();
    if (next !== undefined && (!shortest || next - at < shortest.ms)) shortest = { ms: next - at, from: at, to: next };
    at = next;
  }
  return shortest;
}

/** Every time of `cron` (in `timezone`) from `from` (included) to `to` (not), oldest first; at most `max`: `undefined` when there are more. */
export function cronTimesBetween(cron: string, timezone: string, from: number, to: number, max: number): number[] | undefined {
  const times: number[] = [];
  for (let at = nextCronTime(cron, timezone, from - 1); at !== null && at < to; at = nextCronTime(cron, timezone, at)) {
    if (times.length === max) return undefined;
    times.push(at);
  }
  return times;
}

const ZONED_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * The instant `text` names: an ISO 8601 date or date and time (`2026-11-20`, `2026-11-20T03:00`,
 * `2026-11-20 03:00:30`), read on `timezone`'s wall clock unless it gives its own offset (`Z`,
 * `+01:00`); a ValidationError saying what `label` takes otherwise.
 */
export function zonedInstant(text: string, timezone: string, label: string): number {
  const m = ZONED_TIME.exec(text.trim());
  const wall = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)) : NaN;
  const offset = m?.[8]?.toUpperCase().replace(":", "");
  const offsetMinutes = offset === undefined || offset === "Z" ? 0 : Number(offset.slice(1, 3)) * 60 + Number(offset.slice(3, 5));
  // Date.UTC rolls 2026-02-30 over into March: a date that does not come back the same is no date.
  if (m && new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).toISOString().slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}`) {
    throw new ValidationError(`${label} ${JSON.stringify(text)}: ${m[1]}-${m[2]}-${m[3]} is not a day of the calendar`);
  }
  if (!m || Number.isNaN(wall) || Number(m[4] ?? 0) > 23 || Number(m[5] ?? 0) > 59 || Number(m[6] ?? 0) > 59 || offsetMinutes > 14 * 60 || Number(offset?.slice(3, 5) ?? 0) > 59) {
    throw new ValidationError(`${label} ${JSON.stringify(text)}: give a date or a date and time, such as 2026-11-20 or 2026-11-20T03:00 (read in ${timezone}) or 2026-11-20T02:00Z`);
  }
  const ms = Math.round(Number(m[7] ?? 0) * 1000);
  if (offset === undefined) return placed(wall, timezone, wall - 2 * DAY) + ms;
  return wall + ms - (offset.startsWith("-") ? -1 : 1) * offsetMinutes * 60_000;
}

/**
 * The first instant after `after` whose wall-clock time in `timezone` is `wall` (both as UTC epoch
 * ms); in a gap the clocks skip, the first instant after the gap.
 */
function placed(wall: number, timezone: string, after: number): number {
  // The offset is at most a day either way: the instants that could show `wall` lie in between.
  const before = wall - DAY;
  const candidates = [wall - offsetAt(wall - offsetAt(wall, timezone), timezone), wall - offsetAt(wall + DAY, timezone), wall - offsetAt(before, timezone)];
  const exact = candidates.filter((t) => t > after && wallClock(t, timezone) === wall).sort((a, b) => a - b)[0];
  if (exact !== undefined) return exact;
  // Skipped: the first instant whose wall clock is past it, by halving the day around it.
  let [low, high] = [Math.max(after, wall - DAY), wall + DAY];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (wallClock(mid, timezone) >= wall) high = mid;
    else low = mid;
  }
  return high;
}

const DAY = 86_400_000;

/** The zone's offset from UTC at an instant, in ms. */
function offsetAt(instant: number, timezone: string): number {
  return wallClock(instant, timezone) - Math.floor(instant / 1000) * 1000;
}

/** `2026-12-03 03:00` on `timezone`'s wall clock (seconds shown when not :00): how schedules print their times. */
export function zonedTime(at: number, timezone: string): string {
  return new Intl.DateTimeFormat("sv-SE", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" })
    .format(at)
    .replace(/:00$/, "");
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time in `timezone` at an instant, to the second, as if it were UTC (epoch ms). */
function wallClock(instant: number, timezone: string): number {
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", { timeZone: timezone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    formats.set(timezone, format);
  }
  const part = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, Number(p.value)])) as Record<string, number>;
  return Date.UTC(part.year!, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!);
}
