import type { Command } from "../cli/command.js";
import { backup } from "./backup.js";
import { batch } from "./batch.js";
import { breakpoint, unbreak } from "./breakpoints.js";
import { cancel } from "./cancel.js";
import { checkpoints } from "./checkpoints.js";
import { consoleCommand } from "./console.js";
import { deleteRun } from "./delete.js";
import { demo } from "./demo.js";
import { diff } from "./diff.js";
import { edit } from "./edit.js";
import { events } from "./events.js";
import { fork } from "./fork.js";
import { graph } from "./graph.js";
import { interrupts } from "./interrupts.js";
import { kill } from "./kill.js";
import { prune } from "./prune.js";
import { resolve } from "./resolve.js";
import { retry } from "./retry.js";
import { run } from "./run.js";
import { schedule } from "./schedule.js";
import { runs } from "./runs.js";
import { show } from "./show.js";
import { signal } from "./signal.js";
import { start } from "./start.js";
import { state } from "./state.js";
import { upgrade } from "./upgrade.js";
import { validate } from "./validate.js";
import { worker } from "./worker.js";
import { workers } from "./workers.js";
import { workflows } from "./workflows.js";

/** Every subcommand, in the order `pitwall --help` lists them. */
export const COMMANDS: readonly Command[] = [
  validate,
  graph,
  start,
  run,
  worker,
  workers,
  runs,
  workflows,
  show,
  events,
  state,
  checkpoints,
  diff,
  interrupts,
  resolve,
  edit,
  kill,
  retry,
  cancel,
  signal,
  batch,
  breakpoint,
  unbreak,
  fork,
  upgrade,
  schedule,
  consoleCommand,
  backup,
  prune,
  deleteRun,
  demo,
] as unknown as readonly Command[];
