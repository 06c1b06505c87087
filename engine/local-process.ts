import { hostname } from "node:os";

/** A process as a record names it (a worker's heartbeat, a command's recorder): its host, and its id there. */
export interface ProcessRef {
  host: string;
  pid: number;
}

/** This process, as records name it. */
export function thisProcess(): ProcessRef {
  return { host: hostname(), pid: process.pid };
}

/** When this process started (its clock). */
export const PROCESS_STARTED_AT = Date.now() - Math.round(process.uptime() * 1000);

/** Whether the process named ran on this host (where its id can be looked up). */
export function ofThisHost(ref: ProcessRef): boolean {
  return ref.host === hostname();
}

/**
 * Whether no process of this host has this id now. Only "no such process" says so: one of
 * another user (EPERM) runs.
 */
export function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Whether the process named, which wrote a record at `since`, is demonstrably gone: it ran on this
 * host, and no process has its id now, or this process has its id and started after `since`. A
 * process elsewhere, or one whose id was taken by a new process, is not known to be gone.
 */
export function processGone(ref: ProcessRef, since: number): boolean {
  return ofThisHost(ref) && (ref.pid === process.pid ? since < PROCESS_STARTED_AT : pidGone(ref.pid));
}
