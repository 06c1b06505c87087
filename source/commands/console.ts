import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";

export const consoleCommand = defineCommand({
  name: "console",
  usage: "console [--read-only] [--as NAME]",
  summary: "the operations console (full screen) attached to the store",
  details: `Watch runs live, answer interrupts, edit state, kill, retry, compare checkpoints. ? shows
the keys, q quits. --read-only offers no action that writes.`,
  flags: { readOnly: { type: "boolean" } },
  args: { min: 0, max: 0 },
  stopsOnSignal: true,
  async run({ flags, global, store }) {
    requireTerminal();
    const s = await store();
    const { runConsole } = await import("../console/index.js");
    await runConsole({ store: s, actor: global.actor, readOnly: Boolean(flags.readOnly), storeLabel: s.description });
    return EXIT.ok;
  },
});

/** Ink needs a terminal it can put in raw mode; say so instead of failing obscurely. */
export function requireTerminal(): void {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError("needs an interactive terminal (stdin and stdout must be a TTY)");
  }
}
