/**
 * A length of time as the commands and the console show one (span in source/text/plain.ts), for
 * a pattern: 850ms, 3.2s, 12s, 5m, 5h20m, 2d. Which it is depends on the clock: a test that takes
 * longer, or runs at another time of day, sees another unit.
 */
export const SPAN = String.raw`(?:\d+ms|\d+\.\ds|\d+s|\d+m|\d+h(?:\d+m)?|\d+d)`;
