import { render } from "ink-testing-library";
import stripAnsi from "strip-ansi";
import type { Store } from "../../engine/index.js";
import { Console } from "../../source/console/app.js";
import type { ViewEntry } from "../../source/console/context.js";
import { systemEditor, type Editor } from "../../source/console/editor.js";
import { filterKeyboard } from "../../source/console/keyboard.js";

const KEYS: Record<string, string> = {
  enter: "\r",
  esc: "\u001b",
  up: "\u001b[A",
  down: "\u001b[B",
  right: "\u001b[C",
  left: "\u001b[D",
  tab: "\t",
  "shift-tab": "\u001b[Z",
  backspace: "\u007f",
  space: " ",
  pgdn: "\u001b[6~",
  pgup: "\u001b[5~",
  "ctrl-k": "\u000b",
  "ctrl-u": "\u0015",
  "ctrl-w": "\u0017",
  "ctrl-c": "\u0003",
};

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface ConsoleHarness {
  /** The last frame drawn, without colours. */
  frame(): string;
  /** The last frame exactly as written to the terminal. */
  raw(): string;
  lines(): string[];
  /** Presses keys by name (`enter`, `esc`, `ctrl-k`...) or as typed characters. */
  press(...keys: string[]): Promise<void>;
  type(text: string): Promise<void>;
  /** Types faster than the screen redraws: every key in the same tick. */
  typeAhead(text: string): Promise<void>;
  /** Polls the frame until it contains `text` (or satisfies the predicate). */
  waitFor(expected: string | RegExp | ((frame: string) => boolean), timeoutMs?: number): Promise<string>;
  resize(columns: number, rows: number): Promise<void>;
  frames(): string[];
  /** What the console put on the clipboard, oldest first. */
  copied: string[];
  /** The console quit: it no longer reads the keyboard. */
  quit(): boolean;
  unmount(): void;
}

export interface HarnessOptions {
  store: Store;
  columns?: number;
  rows?: number;
  readOnly?: boolean;
  actor?: string;
  /** A shell command used as $EDITOR. */
  editorCommand?: string;
  editor?: Editor;
  initial?: ViewEntry;
  /** How long store events are gathered before the screen updates (default 20 ms). */
  coalesceMs?: number;
  /** How often the counts are read again, noticing runs another process deleted (default 5 s). */
  recountMs?: number;
  /** How often the store is asked whether it answers (default 2 s), and how long it has to answer (default 3 s). */
  heartbeatMs?: number;
  answerMs?: number;
  /** What the header names the store (default memory:test). */
  storeLabel?: string;
}

/**
 * The console rendered with ink-testing-library against a store, in a terminal of the given
 * size (set on the test stdout, then announced with a resize event as a terminal would).
 */
export async function openConsole(options: HarnessOptions): Promise<ConsoleHarness> {
  const copied: string[] = [];
  const instance = render(
    <Console
      store={options.store}
      actor={options.actor ?? "tester"}
      readOnly={options.readOnly ?? false}
      storeLabel={options.storeLabel ?? "memory:test"}
      editor={options.editor ?? systemEditor(options.editorCommand ?? "false", (fn) => fn())}
      clipboard={(text) => copied.push(text)}
      coalesceMs={options.coalesceMs ?? 20}
      {...(options.recountMs ? { recountMs: options.recountMs } : {})}
      {...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {})}
      {...(options.answerMs ? { answerMs: options.answerMs } : {})}
      {...(options.initial ? { initial: options.initial } : {})}
    />,
  );
  const { stdout, stdin } = instance;
  // As runConsole does with the terminal: Ink reads keys and typed text only.
  filterKeyboard(stdin);
  const frame = () => stripAnsi(instance.lastFrame() ?? "");
  const resize = async (columns: number, rows: number) => {
    Object.defineProperty(stdout, "columns", { value: columns, configurable: true });
    Object.defineProperty(stdout, "rows", { value: rows, configurable: true });
    stdout.emit("resize");
    await turn();
    await turn();
  };
  const harness: ConsoleHarness = {
    frame,
    raw: () => instance.lastFrame() ?? "",
    lines: () => frame().replace(/\n$/, "").split("\n"),
    async press(...keys) {
      for (const key of keys) {
        stdin.write(KEYS[key] ?? key);
        await turn();
        await turn();
      }
    },
    async type(text) {
      for (const ch of text) {
        stdin.write(ch);
        await turn();
      }
      await turn();
    },
    async typeAhead(text) {
      for (const ch of text) stdin.write(ch);
      await turn();
      await turn();
    },
    async waitFor(expected, timeoutMs = 5_000) {
      const test = typeof expected === "function" ? expected : typeof expected === "string" ? (f: string) => f.includes(expected) : (f: string) => expected.test(f);
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (test(frame())) return frame();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // A loaded machine can hold this loop past the deadline while the frame arrives: look once more.
      if (test(frame())) return frame();
      throw new Error(`timed out waiting for ${String(expected)}; the screen shows:\n${frame()}`);
    },
    resize,
    frames: () => instance.frames.map((f) => stripAnsi(f)),
    copied,
    quit: () => stdin.listenerCount("readable") === 0,
    unmount: () => instance.unmount(),
  };
  await turn();
  await resize(options.columns ?? 80, options.rows ?? 24);
  return harness;
}

/** After a test: its console unmounted and what it ran on closed (either may be unset), both to be forgotten. */
export async function closeAll(ui: ConsoleHarness | undefined, ranOn: { close(): Promise<unknown> } | undefined): Promise<[undefined, undefined]> {
  ui?.unmount();
  await ranOn?.close();
  return [undefined, undefined];
}
