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

/** Refuses a cron expression croner cannot read, naming it and what is wrong with it. */
export function checkCron(cron: unknown): string {
  if (typeof cron !== "string" || cron.trim() === "") throw new ValidationError("cron: give five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly");
  const fields = cron.trim().split(/\s+/).length;
  if (!cron.trim().startsWith("@") && fields !== 5) throw new ValidationError(`cron ${JSON.stringify(cron)}: give five fields (minute hour day-of-month month day-of-week), not ${fields}`);
  try {
    cronOf(cron.trim(), "UTC");
  } catch (error) {
    const why = (error as Error).message.replace(/^Cron\w*:\s*/, "");
    throw new ValidationError(`cron ${JSON.stringify(cron)}: ${why.charAt(0).toLowerCase()}${why.slice(1)}`);
  }
  return cron.trim();
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

/** The first time of `cron` (in `timezone`) after `after` (ms); null when it has none. */
export function nextCronTime(cron: string, timezone: string, after: number): number | null {
  const wall = cronOf(cron, "UTC").nextRun(new Date(wallClock(after, timezone)))?.getTime();
  return wall === undefined ? null : placed(wall, timezone, after);
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
