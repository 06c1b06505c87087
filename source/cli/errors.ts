import { isPitwallError, StoreError, ValidationError, WorkflowError } from "../../engine/index.js";
import { json } from "./output.js";

/** The exit codes every command uses; scripts rely on them. */
export const EXIT = {
  ok: 0,
  /** The operation was attempted and failed (a store error, a run that failed under --wait...). */
  failed: 1,
  /** Bad input or usage: unknown flag, invalid JSON, validation errors, unknown run or interrupt. */
  usage: 2,
  /** The thing exists but its state forbids the operation: already resolved, stale, ended. */
  conflict: 3,
  /** A wait with --timeout ran out before the run settled: it goes on, neither failed nor done. */
  timedOut: 4,
  /** Ended by SIGINT or SIGTERM (128 + the signal's number, as a shell reports it). */
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of a command the given signal ended (none: it ended by itself). */
export function signalExit(signal: NodeJS.Signals | undefined): ExitCode {
  return signal === "SIGINT" ? EXIT.interrupted : signal === "SIGTERM" ? EXIT.terminated : EXIT.ok;
}

/** A mistake in what the person typed: exit 2 with this one-line message. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A wait the person limited (`--timeout`) ran out: exit 4, distinct from a run that failed. */
export class TimedOutError extends Error {
  override readonly name = "TimedOutError";
}

/** A count given as `--name N` (undefined when not given); anything but a whole number ≥ 1 is a usage error. */
export function countFlag(name: string, value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new UsageError(`--${name} must be a whole number of at least 1`);
  return value;
}

export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof TimedOutError) return EXIT.timedOut;
  if (isPitwallError(error)) {
    switch (error.code) {
      case "VALIDATION":
      case "NOT_FOUND":
      case "WORKFLOW":
        return EXIT.usage;
      case "CONFLICT":
      case "STALE_FENCE":
        return EXIT.conflict;
      case "TIMEOUT":
        return EXIT.timedOut;
      default:
        return EXIT.failed;
    }
  }
  return EXIT.failed;
}

/**
 * The one line printed for an error. Validation errors list their failing paths on the same
 * line, because a person fixing a patch needs to know where.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const issues = (error as { issues?: readonly { path: string; message: string }[] }).issues ?? [];
  // Issues the message says already (naming their path, or in their words) are not said twice.
  const said = (i: { path: string; message: string }) => (i.path !== "$" && error.message.includes(i.path)) || error.message.includes(i.message);
  const extra = issues.filter((i) => !said(i)).map((i) => `${i.path}: ${i.message}`);
  const message = error.message.split("\n")[0]!;
  // "(and 2 more)" says what the list after it shows.
  return extra.length > 0 ? `${message.replace(/ \(and \d+ more\)$/, "")} (${extra.join("; ")})` : message;
}

/**
 * An error as `--json` prints it on stderr, so that a script can branch on `code` (NOT_FOUND,
 * CONFLICT, USAGE...) rather than parse the message: `{ "error": { "command", "code",
 * "message", "exitCode", "issues"?, "problems"?, "transient"? } }` on one line.
 */
export function errorJson(command: string | undefined, error: unknown): string {
  const code = error instanceof UsageError ? "USAGE" : error instanceof TimedOutError ? "TIMEOUT" : isPitwallError(error) ? error.code : "ERROR";
  const record = {
    ...(command ? { command } : {}),
    code,
    message: describeError(error),
    exitCode: exitCodeOf(error),
    ...(error instanceof ValidationError && error.issues.length > 0 ? { issues: error.issues } : {}),
    ...(error instanceof WorkflowError && error.problems.length > 0 ? { problems: error.problems } : {}),
    ...(error instanceof StoreError ? { transient: error.transient } : {}),
  };
  return json({ error: record });
}
