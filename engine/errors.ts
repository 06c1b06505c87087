import type { RunRecord, RunStatus } from "./store/records.js";

/**
 * Every error pitwall raises on purpose is a PitwallError with a stable `code`, so that callers
 * (the CLI's exit codes, the console's footer) can react without parsing messages.
 */
export type ErrorCode =
  | "VALIDATION"
  | "CONFLICT"
  | "STALE_FENCE"
  | "NOT_FOUND"
  | "STORE"
  | "WORKFLOW"
  | "TIMEOUT"
  | "RUN";

export class PitwallError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad input: an invalid state edit, run input, response or command argument. */
export class ValidationError extends PitwallError {
  /** Each failing location as a JSON path like `$.tasks[0]`, with its message. */
  readonly issues: readonly { path: string; message: string }[];
  constructor(message: string, issues: readonly { path: string; message: string }[] = []) {
    super("VALIDATION", message);
    this.issues = issues;
  }
}

/** The thing exists but is not in a state that allows the operation (already resolved, ended run...). */
export class ConflictError extends PitwallError {
  constructor(message: string) {
    super("CONFLICT", message);
  }
}

/**
 * A start given an id that a run already has. `sameStart` says whether that run is a start of the
 * same workflow (by name) from the same input with the same interrupt lists: a start retried
 * after its reply was lost, which a caller may take as done (`engine.start(..., { id, ifExists:
 * "reuse" })`, `pitwall start --id`). Otherwise the id names another request, and the message says
 * how that run differs.
 */
export class RunExistsError extends ConflictError {
  constructor(
    readonly run: RunRecord,
    readonly sameStart: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** A writer whose lease was taken over tried to commit; nothing it sent was written. */
export class StaleFenceError extends PitwallError {
  constructor(
    readonly runId: string,
    readonly fence: number,
    readonly currentFence: number,
  ) {
    super(
      "STALE_FENCE",
      `run ${runId}: fencing token ${fence} is stale (current ${currentFence}); the lease was taken over`,
    );
  }
}

/** `what` (a run, a checkpoint, an interrupt, a workflow...) named `id` is not in the store. */
export class NotFoundError extends PitwallError {
  constructor(
    readonly what: string,
    readonly id: string,
  ) {
    super("NOT_FOUND", `${what} ${id} not found`);
  }
}

/**
 * `run.wait({ timeoutMs })` ran out before the run settled (or ended, with `until: "end"`): the
 * run goes on, neither failed nor done. `run` is the record as it was then (`status`: where it
 * stands), so a service can answer a 504 with it.
 */
export class WaitTimeoutError extends PitwallError {
  readonly runId: string;
  readonly status: RunStatus;
  constructor(
    readonly run: RunRecord,
    readonly timeoutMs: number,
    readonly until: "settled" | "end",
    why?: string,
  ) {
    super("TIMEOUT", `run ${run.id} did not ${until === "end" ? "end" : "settle"} within ${timeoutMs} ms (it is ${run.status}${why ? `; ${why}` : ""})`);
    this.runId = run.id;
    this.status = run.status;
  }
}

/** The store cannot be opened or used: corrupt, locked, newer schema, unreachable. */
export class StoreError extends PitwallError {
  /** The store may answer if asked again (locked for now, a lost connection), unlike a corrupt file. */
  readonly transient: boolean;
  /** This process may not write to the store (a read-only file or folder); it may still read it. */
  readonly notWritable: boolean;
  /**
   * The store this process opened is no longer there (its file deleted or replaced): nothing this
   * process does reaches it again, unlike a full disk or a lock, which may pass.
   */
  readonly gone: boolean;
  /** The store's file is damaged (not a database, or its pages corrupt): it must be restored. */
  readonly damaged: boolean;
  constructor(message: string, options?: { cause?: unknown; transient?: boolean; notWritable?: boolean; gone?: boolean; damaged?: boolean }) {
    super("STORE", message, options);
    this.transient = options?.transient ?? false;
    this.notWritable = options?.notWritable ?? false;
    this.gone = options?.gone ?? false;
    this.damaged = options?.damaged ?? false;
  }
}

/** A workflow definition that cannot be compiled; `problems` lists every one found. */
export class WorkflowError extends PitwallError {
  constructor(
    message: string,
    readonly problems: readonly { path: string; code: string; message: string; severity: "error" | "warning" }[] = [],
  ) {
    super("WORKFLOW", message);
  }
}

export function isPitwallError(error: unknown): error is PitwallError {
  return error instanceof PitwallError;
}

export function errorMessage(error: unknown): string {
  return asError(error).message;
}

/**
 * What was thrown, as an Error. Code may throw anything: a plain object keeps its `message`,
 * `name` and `code` (so `retryOn` still matches its code), a string is the message, and anything
 * else is shown as JSON rather than "[object Object]".
 */
export function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === "string") return new Error(thrown);
  if (typeof thrown === "object" && thrown !== null) {
    const { message, name, code } = thrown as { message?: unknown; name?: unknown; code?: unknown };
    const error = new Error(typeof message === "string" ? message : describeThrown(thrown));
    if (typeof name === "string") error.name = name;
    if (typeof code === "string") Object.assign(error, { code });
    return error;
  }
  return new Error(`threw ${describeThrown(thrown)}`);
}

function describeThrown(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The `code` property an error carries (Node's ECONNREFUSED, pitwall's TIMEOUT...), if it is a string. */
export function errorCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a folder, not a file",
  ENOTDIR: "a part of its path is not a folder",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "its name is too long",
};

/** Why a file could not be read, in words ("no such file") rather than Node's code. */
export function fileProblem(error: unknown): string {
  const code = errorCodeOf(error);
  return (code && FILE_PROBLEMS[code]) ?? code ?? errorMessage(error);
}
