import type { WorkerNoticeKind } from "../../engine/index.js";
import type { Output } from "../cli/output.js";
import { clean } from "../text/plain.js";

export type LogLevel = "info" | "warn" | "error";

/** What a worker process logs: the worker's notices, and what the command itself says. */
export type LogKind = WorkerNoticeKind | "started" | "health" | "run-ended" | "run-error" | "store-room" | "stopping" | "stopped";

export interface LogEntry {
  level: LogLevel;
  kind: LogKind;
  message: string;
  /** Anything else a line carries for scripts (`runId`, `status`, `why`...), under --json. */
  [field: string]: unknown;
}

/**
 * The log of `pitwall worker`, one line per entry: under --json a JSON object on stdout with the
 * time (ISO 8601, UTC), level, worker id and kind, and the entry's fields; otherwise the time, a
 * level word and the message, a run's end on stdout and the rest on stderr (stdout is the runs'
 * outcomes, as the worker's output has always been).
 */
export class WorkerLog {
  constructor(
    private readonly out: Output,
    private readonly worker: string,
  ) {}

  log(entry: LogEntry): void {
    const time = new Date().toISOString();
    if (this.out.json) {
      const { level, kind, message, ...fields } = entry;
      this.out.value({ time, level, worker: this.worker, kind, message, ...fields });
      return;
    }
    const line = `${time} ${entry.level.toUpperCase().padEnd(5)} ${clean(entry.message)}`;
    if (entry.kind === "run-ended") this.out.line(line);
    else this.out.note(line);
  }

  info(kind: LogKind, message: string, fields: Record<string, unknown> = {}): void {
    this.log({ ...fields, level: "info", kind, message });
  }
}
