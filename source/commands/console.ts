import { StoreError, type Store } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { UsageError, signalExit } from "../cli/errors.js";

export const consoleCommand = defineCommand({
  name: "console",
  usage: "console [--read-only] [--as NAME]",
  summary: "the operations console (full screen) attached to the store",
  details: `Watch runs live, answer interrupts, edit state, kill, retry, compare checkpoints. ? shows
the keys, q quits. --read-only opens the store read-only and offers no action that writes; a
store this process may not write (a read-only file) is opened so by itself.`,
  flags: { readOnly: { type: "boolean" } },
  args: { min: 0, max: 0 },
  createsStore: true,
  stopsOnSignal: true,
  async run({ flags, global, store }) {
    requireTerminal();
    const opened = await openForConsole(store, Boolean(flags.readOnly));
    const { runConsole } = await import("../console/index.js");
    return signalExit(await runConsole({ store: opened.store, actor: global.actor, readOnly: opened.readOnly, storeLabel: opened.label, secretKeys: global.secretKeys }));
  },
});

/** The store as asked for; one this process may not write is opened read-only instead, and labelled so. */
async function openForConsole(store: (readOnly?: boolean) => Promise<Store>, readOnly: boolean): Promise<{ store: Store; readOnly: boolean; label: string }> {
  try {
    const s = await store(readOnly);
    return { store: s, readOnly, label: s.description };
  } catch (error) {
    if (readOnly || !(error instanceof StoreError && error.notWritable)) throw error;
    const s = await store(true);
    return { store: s, readOnly: true, label: `${s.description} (read-only file)` };
  }
}

/** Ink needs a terminal it can put in raw mode; say so instead of failing obscurely. */
export function requireTerminal(): void {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError("needs an interactive terminal (stdin and stdout must be a TTY)");
  }
}
