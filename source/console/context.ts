import { createContext, useContext, useSyncExternalStore } from "react";
import { errorMessage, isPitwallError, type Operator, type Store } from "../../engine/index.js";
import type { Line } from "./components/lines.js";
import type { ConsoleData, ConsoleSnapshot } from "./data.js";
import type { Editor } from "./editor.js";
import type { LiveFeed } from "./live.js";
import type { TaskTarget } from "./views/task-view.js";
import type { QueueOrder } from "./views/interrupt-rows.js";
import { clean } from "./text.js";

/** Where the operator is: views on a stack, `esc` pops. */
export type ViewEntry =
  | { kind: "runs" }
  | { kind: "run"; runId: string; tab?: number }
  | { kind: "interrupts" }
  | { kind: "schedules" }
  | { kind: "operator"; interruptId: string; /** The queue it was opened from, whose order `n`/`N` keep (default: the whole queue, oldest first). */ queue?: QueueOrder }
  | ({ kind: "task" } & TaskTarget)
  | { kind: "text"; title: string; lines: Line[]; /** Where a wrapped line's later rows start (default 2 columns in). */ indent?: number };

export interface Message {
  tone: "ok" | "error" | "info" | "busy";
  text: string;
}

export interface ConfirmRequest {
  title: string;
  body: Line[];
  /** The button that does it, e.g. "Kill task". */
  action: string;
  /** A reason is asked for; `required` keeps the action button refused until one is typed. */
  reason: "required" | "optional" | "none";
  /** A list to be read whole (what a decision on many sends): the body may take the screen, the view above giving up its rows. */
  long?: boolean;
  /** The run the action is on: if it ends while the dialog is open, the dialog closes and says how it ended. */
  runId?: string;
  /**
   * When the run had ended as the action began (null: it had not), for a dialog opened later (after
   * $EDITOR): one that ended since closes it at once. Else it is read when the dialog opens.
   */
  runEndedAt?: number | null;
}

export interface ConfirmResult {
  ok: boolean;
  reason: string;
  /** The dialog closed itself (its run ended), and the footer says why: the caller has nothing to add. */
  closed?: boolean;
}

export interface PromptRequest {
  title: string;
  initial?: string;
  hint?: string;
  /** Suggestions for the text typed so far; `tab` takes the first. */
  complete?: (text: string) => string[];
  /** Called with the text at each change, for a view that follows it live (the runs filter). */
  onChange?: (text: string) => void;
}

export type Dialog =
  | ({ kind: "confirm"; id: number; resolve: (result: ConfirmResult) => void } & ConfirmRequest)
  | ({ kind: "prompt"; id: number; resolve: (text: string | undefined) => void } & PromptRequest);

/**
 * Quitting while a write is under way, which quitting would stop part-way (`underWay` names it):
 * asked over any dialog open, which stays as it was when the operator stays.
 */
export interface QuitQuestion {
  id: number;
  underWay: string;
  resolve: (quit: boolean) => void;
}

export interface Ui {
  report(message: Message | undefined): void;
  /**
   * The operator moved to another view or tab: a message reported before the key that moved
   * is about what was left, and goes (one reported since, an action's outcome that moved, stays).
   */
  moved(): void;
  confirm(request: ConfirmRequest): Promise<ConfirmResult>;
  prompt(request: PromptRequest): Promise<string | undefined>;
  /** A write to the store is under way (`label`, as the footer says it) until the returned function is called: quitting meanwhile asks first. */
  working(label: string): () => void;
}

export interface Nav {
  push(view: ViewEntry): void;
  pop(): void;
  replace(view: ViewEntry): void;
  /** Back to the runs list alone (`:runs`). */
  home(): void;
  quit(): void;
}

export interface Services {
  store: Store;
  feed: LiveFeed;
  data: ConsoleData;
  actor: string;
  readOnly: boolean;
  storeLabel: string;
  /** Names of secrets added to the default ones: what it shows of calls hides their values. */
  secretKeys: readonly string[];
  /** Null in a read-only console: nothing there can write. */
  operator: Operator | null;
  editor: Editor;
  /** Puts `text` (an id) on the clipboard and says so in the footer. */
  copy(text: string): void;
  nav: Nav;
  ui: Ui;
}

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services) throw new Error("console services are missing");
  return services;
}

export function useSnapshot(): ConsoleSnapshot {
  const { data } = useServices();
  return useSyncExternalStore(data.subscribe, data.snapshot);
}

/**
 * Runs an operator command without blocking the screen: the footer says it is under way,
 * then what it did or why it was refused (the engine's own one-line message). A refusal
 * `explains` takes (returns true for) is the caller's to put in words.
 */
export async function act(ui: Ui, label: string, command: () => Promise<string>, explains?: (error: unknown) => boolean): Promise<boolean> {
  ui.report({ tone: "busy", text: `${label}…` });
  const done = ui.working(label);
  try {
    ui.report({ tone: "ok", text: clean(await command()) });
    return true;
  } catch (error) {
    if (explains?.(error)) {
      ui.report(undefined);
      return false;
    }
    ui.report({ tone: "error", text: failureText(label, error) });
    return false;
  } finally {
    done();
  }
}

/** Whether an action failed because the store could not be reached or used, not because the engine refused it. */
export function isStoreFailure(error: unknown): boolean {
  return !isPitwallError(error) || error.code === "STORE";
}

/** An action's failure in one line: the engine refusing it is not the same as a store that could not be reached. */
export function failureText(label: string, error: unknown): string {
  return clean(`${label} ${isStoreFailure(error) ? "failed" : "refused"}: ${errorMessage(error)}`);
}
