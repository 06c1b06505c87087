import type { Store } from "../../engine/index.js";
import type { Suspend } from "./editor.js";
import { filterKeyboard } from "./keyboard.js";
import { diffedScreen } from "./screen-diff.js";
import { tuneConsoleProcess } from "./process-tuning.js";
import { boundInkCaches } from "./ink-caches.js";
import { chosenEditor } from "../text/editor-command.js";

export interface ConsoleOptions {
  store: Store;
  /** `alice` or `operator:alice`: the actor of every command. */
  actor: string;
  /** No writing action is registered at all. */
  readOnly: boolean;
  /** Where the console is attached, for the header (no password). */
  storeLabel: string;
  /** Names of secrets added to the default ones: hidden in what it shows of calls, and in its commands' events. */
  secretKeys?: readonly string[];
}

/**
 * Ink decides when it is loaded whether it runs in CI (the CI or CONTINUOUS_INTEGRATION
 * variable), and then draws nothing until exit. An operator's shell may well have CI set; the
 * console is interactive whatever it says, so Ink is loaded with those variables put aside.
 */
async function withoutCiFlags<T>(load: () => Promise<T>): Promise<T> {
  const saved = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  try {
    return await load();
  } finally {
    for (const [key, value] of Object.entries(saved)) if (value !== undefined) process.env[key] = value;
  }
}

/**
 * Ink, React and the console's app as `runConsole` draws with them: Ink loaded with the CI variables
 * put aside (withoutCiFlags). Whatever else renders the console in this process (the render-cost
 * test) loads it here too, before anything imports Ink.
 */
export async function loadConsole() {
  const [{ render }, { createElement }, { Console, RENDER_OPTIONS }, { systemEditor }, { terminalClipboard }] = await withoutCiFlags(() =>
    Promise.all([import("ink"), import("react"), import("./app.js"), import("./editor.js"), import("./clipboard.js")]),
  );
  return { render, createElement, Console, RENDER_OPTIONS, systemEditor, terminalClipboard };
}

const ENTER_SCREEN = "\u001b[?1049h\u001b[?25l\u001b[2J\u001b[H";
const LEAVE_SCREEN = "\u001b[?25h\u001b[?1049l";

/**
 * Opens the console full screen (the terminal's alternate screen) and resolves when the
 * operator quits. The terminal is given back as it was — raw mode off, cursor shown, main
 * screen — on quit, on an error, and on SIGINT or SIGTERM. Resolves with the signal that ended
 * it, if one did (for the exit code).
 */
export async function runConsole(options: ConsoleOptions): Promise<NodeJS.Signals | undefined> {
  // Before React loads, which is why Ink and the app are imported here.
  tuneConsoleProcess();
  const { render, createElement, Console, RENDER_OPTIONS, systemEditor, terminalClipboard } = await loadConsole();
  const inkCaches = await boundInkCaches();
  const { stdin, stdout } = process;
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    if (stdin.isTTY) stdin.setRawMode(false);
    stdout.write(LEAVE_SCREEN);
  };
  const suspend: Suspend = (fn) => {
    // A full-screen editor takes the terminal over; Ink draws everything again afterwards.
    if (stdin.isTTY) stdin.setRawMode(false);
    stdout.write(LEAVE_SCREEN);
    try {
      return fn();
    } finally {
      stdout.write(ENTER_SCREEN);
      if (stdin.isTTY) stdin.setRawMode(true);
      instance.clear();
    }
  };

  stdout.write(ENTER_SCREEN);
  const unfilterKeyboard = filterKeyboard(stdin);
  // Only the rows a frame changed are written to the terminal.
  const screen = diffedScreen(stdout);
  const instance = render(
    createElement(Console, {
      store: options.store,
      actor: options.actor,
      readOnly: options.readOnly,
      storeLabel: options.storeLabel,
      ...(options.secretKeys ? { secretKeys: options.secretKeys } : {}),
      editor: systemEditor(chosenEditor(), suspend),
      clipboard: terminalClipboard((data) => stdout.write(data)),
    }),
    { stdout: screen.stream, exitOnCtrlC: false, patchConsole: true, ...RENDER_OPTIONS },
  );
  let endedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    endedBy = signal;
    instance.unmount();
    restore();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const onCrash = () => restore();
  process.once("exit", onCrash);
  try {
    await instance.waitUntilExit();
  } finally {
    instance.unmount();
    instance.cleanup();
    unfilterKeyboard();
    inkCaches.stop();
    screen.close();
    restore();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("exit", onCrash);
  }
  return endedBy;
}
