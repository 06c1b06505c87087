import type { RunStatus, TaskStatus } from "../../engine/index.js";

/** Every coloured thing also has a glyph, so that status reads without colour too. */
export interface Look {
  glyph: string;
  color: string;
  dim?: boolean;
}

export const RUN_LOOK: Record<RunStatus, Look> = {
  queued: { glyph: "○", color: "blue" },
  running: { glyph: "●", color: "yellow" },
  paused: { glyph: "‖", color: "magenta" },
  succeeded: { glyph: "✓", color: "green" },
  failed: { glyph: "✗", color: "red" },
  canceled: { glyph: "⊘", color: "gray", dim: true },
};

/**
 * A running run whose lease ran out (its worker died or stalled, nobody took it over): still
 * `running` in the store, but nothing runs it, so it must not look like one that runs.
 */
export const ORPHANED_LOOK: Look = { glyph: "⚠", color: "red" };

/** How a run looks in a list or its header: its status, or orphaned. */
export function runLook(status: RunStatus, orphaned: boolean): Look & { word: string } {
  return orphaned ? { ...ORPHANED_LOOK, word: "orphaned" } : { ...RUN_LOOK[status], word: status };
}

/**
 * How a node of the graph looks: its latest task's status, or `idle` if it has not run; `parked`
 * on a timer or a sub-workflow (no person is asked), `skipped` by an operator (it did not run),
 * `caught`: failed, its catch took the failure and the run went on.
 */
export type NodeStatus = TaskStatus | "waiting" | "idle" | "parked" | "skipped" | "caught";

export const NODE_LOOK: Record<NodeStatus, Look> = {
  idle: { glyph: "○", color: "gray" },
  pending: { glyph: "◌", color: "gray" },
  running: { glyph: "●", color: "yellow" },
  succeeded: { glyph: "✓", color: "green" },
  failed: { glyph: "✗", color: "red" },
  interrupted: { glyph: "◆", color: "magenta" },
  waiting: { glyph: "◆", color: "magenta" },
  parked: { glyph: "◷", color: "blue" },
  skipped: { glyph: "↷", color: "gray" },
  caught: { glyph: "↯", color: "yellow" },
  canceled: { glyph: "⊘", color: "gray", dim: true },
};

export type Outcome = "succeeded" | "failed" | "interrupted" | "canceled" | null;

export const OUTCOME_COLOR: Record<Exclude<Outcome, null> | "running", string> = {
  succeeded: "green",
  failed: "red",
  interrupted: "magenta",
  canceled: "gray",
  running: "yellow",
};

export const DIFF_COLOR = { add: "green", remove: "red", change: "yellow", append: "green" } as const;

export const ACCENT = "cyan";
export const MUTED = "gray";
