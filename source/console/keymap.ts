import type { Key } from "ink";

/**
 * The one key table. Keys are dispatched from it, the footer lists the entries the current view
 * handles, and `?` prints it, so the three can never disagree. Entries that write to the store
 * are marked `writes`: a read-only console leaves them out of the table altogether.
 */
interface BindingSpec {
  readonly id: string;
  readonly keys: readonly string[];
  /** Short label for the footer. */
  readonly label: string;
  /** One line for the help screen. */
  readonly help: string;
  /** Section of the help screen. */
  readonly group: Group;
  readonly writes?: true;
  /** Left out of the footer (the help screen still lists it). */
  readonly quiet?: true;
}

export type Group = "Everywhere" | "Lists" | "Runs" | "Schedules" | "Run" | "Graph, timeline and task" | "Events" | "State" | "Checkpoints" | "Interrupt queue" | "Operator panel" | "Dialogs";

export const KEYMAP = [
  { id: "help", keys: ["?"], label: "help", help: "show this help", group: "Everywhere" },
  { id: "palette", keys: [":"], label: "cmd", help: "command palette (:runs, :interrupts, :run <id>, :q)", group: "Everywhere", quiet: true },
  { id: "interrupts", keys: ["i"], label: "interrupts", help: "the queue of pending interrupts", group: "Everywhere", quiet: true },
  { id: "schedules", keys: ["c"], label: "schedules", help: "the schedules: runs started at cron times", group: "Everywhere", quiet: true },
  { id: "back", keys: ["esc"], label: "back", help: "go back (or clear the filter)", group: "Everywhere" },
  { id: "quit", keys: ["q", "ctrl-c"], label: "quit", help: "quit", group: "Everywhere" },
  { id: "copy", keys: ["y"], label: "copy id", help: "copy the id of the selected run, interrupt or task (in a run: the run's) to the clipboard", group: "Everywhere", quiet: true },
  { id: "close", keys: ["q"], label: "back", help: "on a page of text (help, a payload, a diff): close it, as esc does", group: "Everywhere", quiet: true },

  { id: "down", keys: ["j", "down"], label: "down", help: "move down", group: "Lists" },
  { id: "up", keys: ["k", "up"], label: "up", help: "move up", group: "Lists" },
  { id: "pageDown", keys: ["pgdn", "ctrl-d"], label: "page down", help: "page down", group: "Lists" },
  { id: "pageUp", keys: ["pgup", "ctrl-u"], label: "page up", help: "page up", group: "Lists" },
  { id: "top", keys: ["g", "home"], label: "top", help: "first row", group: "Lists" },
  { id: "bottom", keys: ["G", "end"], label: "bottom", help: "last row", group: "Lists" },
  { id: "open", keys: ["enter"], label: "open", help: "open the selected item (in the graph or timeline: the node's task with its model and tool calls)", group: "Lists" },
  { id: "filter", keys: ["/"], label: "filter", help: "filter: words, or key:value (runs: status: workflow:; interrupts: workflow: node: run: kind:)", group: "Lists" },

  { id: "toggle", keys: ["space"], label: "fold", help: "fold or unfold the selected entry (a run's child runs, a key of the state)", group: "Lists" },
  { id: "fold", keys: ["left", "h"], label: "fold", help: "fold", group: "Lists" },
  { id: "unfold", keys: ["right", "l"], label: "unfold", help: "unfold", group: "Lists" },
  { id: "sort", keys: ["s"], label: "sort", help: "sort (runs: activity, age, status, workflow, duration, pending; queue: age, workflow, node, deadline)", group: "Lists" },
  { id: "reverse", keys: ["S"], label: "reverse", help: "turn the order round", group: "Lists", quiet: true },
  { id: "describe", keys: ["w"], label: "why failed", help: "why the run failed: its error's code, node and message, the stack trace a line a frame", group: "Runs", quiet: true },
  { id: "deleteRun", keys: ["D"], label: "delete", help: "delete the selected run that has ended, with its child runs (asks first)", group: "Runs", writes: true },
  { id: "markRun", keys: ["m"], label: "mark", help: "mark the selected run (or unmark it) for C, R, a, r, ! or U on all marked", group: "Runs" },
  { id: "cancelMarked", keys: ["C"], label: "cancel", help: "cancel every marked run (or the selected one), with one reason (lists them and asks first)", group: "Runs", writes: true },
  { id: "retryMarked", keys: ["R"], label: "retry", help: "retry the failed or canceled tasks of every marked run (or of the selected one; asks first)", group: "Runs", writes: true },
  { id: "approveRuns", keys: ["a"], label: "approve", help: "approve the pending interrupts of every marked run (or of the selected one; asks first)", group: "Runs", writes: true },
  { id: "rejectRuns", keys: ["r"], label: "reject", help: "reject the pending interrupts of every marked run (or of the selected one), with one reason", group: "Runs", writes: true },
  { id: "signalRuns", keys: ["!"], label: "signal", help: "send every marked run (or the selected one) a signal: its name, then its data as JSON (asks first)", group: "Runs", writes: true },
  { id: "upgradeRuns", keys: ["U"], label: "upgrade", help: "move every marked run (or the selected one) onto its workflow's newest stored version (asks first)", group: "Runs", writes: true, quiet: true },

  { id: "pauseSchedule", keys: ["p"], label: "pause/resume", help: "pause the selected schedule, or resume it (from its next time after now)", group: "Schedules", writes: true },
  { id: "triggerSchedule", keys: ["t"], label: "trigger", help: "start a run of the selected schedule now, outside its times (asks first; kept to its overlap rule)", group: "Schedules", writes: true },

  { id: "tab", keys: ["1", "2", "3", "4", "5"], label: "tabs", help: "Graph · Events · State · Checkpoints · Timeline", group: "Run" },
  { id: "nextTab", keys: ["]", "tab"], label: "next tab", help: "next tab", group: "Run", quiet: true },
  { id: "prevTab", keys: ["[", "shift-tab"], label: "prev tab", help: "previous tab", group: "Run", quiet: true },
  { id: "answer", keys: ["o"], label: "answer", help: "answer the run's pending interrupt", group: "Run" },
  { id: "parent", keys: ["p"], label: "parent", help: "open the parent run (sub-workflow or fork source)", group: "Run" },
  { id: "signal", keys: ["!"], label: "signal", help: "send the run a signal: its name, then its data as JSON (asks first)", group: "Run", writes: true },
  { id: "cancelRun", keys: ["C"], label: "cancel run", help: "cancel the run (asks for a reason)", group: "Run", writes: true },
  { id: "upgradeRun", keys: ["U"], label: "upgrade", help: "move the run onto its workflow's newest stored version, in place (asks first)", group: "Run", writes: true, quiet: true },

  { id: "kill", keys: ["ctrl-k"], label: "kill", help: "kill the selected node's running task", group: "Graph, timeline and task", writes: true },
  { id: "retry", keys: ["R"], label: "retry", help: "retry the selected failed or canceled task (shows what runs again)", group: "Graph, timeline and task", writes: true },
  { id: "retryEdited", keys: ["E"], label: "retry edited", help: "retry it with the state edited in $EDITOR first (validated, diff shown)", group: "Graph, timeline and task", writes: true, quiet: true },
  { id: "breakpoint", keys: ["b"], label: "breakpoint", help: "set or clear a breakpoint before the selected node", group: "Graph, timeline and task", writes: true },

  { id: "follow", keys: ["f"], label: "follow", help: "follow new events (on/off)", group: "Events" },

  { id: "edit", keys: ["e"], label: "edit", help: "edit the state in $EDITOR: validated, diff shown before sending (state tab, operator panel)", group: "State", writes: true },

  { id: "mark", keys: ["space"], label: "mark", help: "mark a checkpoint (then d diffs it against the selected one, or against a second marked one)", group: "Checkpoints" },
  { id: "diff", keys: ["d"], label: "diff marked", help: "diff the two marked checkpoints, or the one marked against the selected one", group: "Checkpoints" },
  { id: "fork", keys: ["F"], label: "fork", help: "fork a new run from the selected checkpoint", group: "Checkpoints", writes: true },
  { id: "forkEdited", keys: ["E"], label: "fork edited", help: "fork from it with its state edited in $EDITOR first (validated, diff shown)", group: "Checkpoints", writes: true, quiet: true },

  { id: "markInterrupt", keys: ["space"], label: "mark", help: "mark the selected interrupt (or unmark it) for a decision on all marked", group: "Interrupt queue" },
  { id: "markAll", keys: ["*"], label: "mark all", help: "clear the marks; with none, mark every run or interrupt shown (all those the filter keeps)", group: "Lists", quiet: true },
  { id: "approveMarked", keys: ["a"], label: "approve marked", help: "approve every marked interrupt (lists them and asks first)", group: "Interrupt queue", writes: true },
  { id: "rejectMarked", keys: ["r"], label: "reject marked", help: "reject every marked interrupt, with one reason (asks first)", group: "Interrupt queue", writes: true },

  { id: "approve", keys: ["a"], label: "approve", help: "approve", group: "Operator panel", writes: true },
  { id: "reject", keys: ["r"], label: "reject", help: "reject (asks for a reason)", group: "Operator panel", writes: true },
  { id: "respond", keys: ["t"], label: "respond", help: "respond with text", group: "Operator panel", writes: true },
  { id: "decide", keys: ["x"], label: "other", help: "take another of the allowed decisions", group: "Operator panel", writes: true },
  { id: "next", keys: ["n"], label: "next", help: "next pending interrupt (of those the queue shows, in its order)", group: "Operator panel" },
  { id: "prev", keys: ["N"], label: "prev", help: "previous pending interrupt (of those the queue shows, in its order)", group: "Operator panel" },
  { id: "whole", keys: ["v"], label: "whole", help: "show the whole request (question, values shown, data) as JSON", group: "Operator panel" },

  { id: "submit", keys: ["enter"], label: "ok", help: "confirm the focused button or the text", group: "Dialogs" },
  { id: "dismiss", keys: ["esc"], label: "cancel", help: "close without doing anything", group: "Dialogs" },
  { id: "switch", keys: ["tab", "left", "right"], label: "switch", help: "move between the buttons (left and right only where there is no text field: there they do nothing)", group: "Dialogs" },
  { id: "complete", keys: ["tab"], label: "complete", help: "in the command palette: complete the command or run id (as much as the matches share)", group: "Dialogs" },
  { id: "quitAnyway", keys: ["y"], label: "quit", help: "at \"quit?\" (q or ctrl-c asks it while an action is still being sent): quit all the same", group: "Dialogs" },
  { id: "stay", keys: ["n"], label: "stay", help: "at \"quit?\": stay (as esc does)", group: "Dialogs" },
  { id: "clearText", keys: ["ctrl-u"], label: "clear", help: "in a text field (a filter, the palette, a reason): clear it", group: "Dialogs", quiet: true },
  { id: "deleteWord", keys: ["ctrl-w"], label: "delete word", help: "in a text field: delete the last word", group: "Dialogs", quiet: true },
] as const satisfies readonly BindingSpec[];

export type ActionId = (typeof KEYMAP)[number]["id"];

export interface Binding extends BindingSpec {
  readonly id: ActionId;
}

/**
 * What a key does. It may return a promise (an action that reads or writes the store): the router
 * reports its failure in the footer. `explains`: the key does not apply here and the handler only
 * says why, so the footer does not offer it.
 */
export type Handler = ((key: string) => void | Promise<unknown>) & { readonly explains?: true };

/** A handler for a key that does not apply here, which says why instead of a generic "nothing here". */
export function explain(say: () => void): Handler {
  return Object.assign(() => say(), { explains: true as const });
}
export type Handlers = Partial<Record<ActionId, Handler | undefined | null | false>>;

/** The table a console uses: without writing actions when read-only. */
export function bindingsFor(readOnly: boolean): readonly Binding[] {
  const all = KEYMAP as readonly Binding[];
  return readOnly ? all.filter((b) => !b.writes) : all;
}

/** A key press as the names used in the table: `j`, `G`, `enter`, `esc`, `ctrl-k`, `shift-tab`... */
export function keyName(input: string, key: Key): string {
  if (key.upArrow) return "up";
  if (key.downArrow) return "down";
  if (key.leftArrow) return "left";
  if (key.rightArrow) return "right";
  if (key.pageUp) return "pgup";
  if (key.pageDown) return "pgdn";
  if (key.home) return "home";
  if (key.end) return "end";
  if (key.return) return "enter";
  if (key.escape) return "esc";
  if (key.tab) return key.shift ? "shift-tab" : "tab";
  if (key.backspace || key.delete) return "backspace";
  if (key.ctrl && input) return `ctrl-${input.toLowerCase()}`;
  if (input === " ") return "space";
  return input;
}

/** How a key is written on screen. */
export function keyLabel(name: string): string {
  return name === "enter" ? "⏎" : name;
}
