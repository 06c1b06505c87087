import { Cron } from "croner";
import { ValidationError } from "../errors.js";
import { didYouMean } from "../suggest.js";

// Cron times by croner: five fields or a nickname (@hourly, @daily, @weekly, @monthly, @yearly),
// read in an IANA time zone, across DST changes as croner computes them (a time that a clock
// change skips fires at the first minute after it; one it repeats fires once).

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
  return cronOf(cron, timezone).nextRun(new Date(after))?.getTime() ?? null;
}
