import type { ViewEntry } from "./context.js";
import type { ConsoleSnapshot } from "./data.js";

export type PaletteCommand =
  | { kind: "quit" }
  | { kind: "help" }
  | { kind: "runs" }
  | { kind: "view"; view: ViewEntry }
  | { kind: "error"; message: string };

const WORDS = ["runs", "interrupts", "schedules", "run ", "help", "q"];

/**
 * `:run ab` finds the run whose id starts with (or contains) `ab`, if only one does among the
 * runs listed; an id none of them matches is opened as given, from the store (the list holds the
 * most recent runs only), where the run view says if it does not exist.
 */
function findRun(ref: string, snap: ConsoleSnapshot): string | { error: string } {
  if (snap.runs.has(ref)) return ref;
  const ids = [...snap.runs.keys()];
  const starts = ids.filter((id) => id.startsWith(ref));
  const found = starts.length > 0 ? starts : ids.filter((id) => id.includes(ref));
  if (found.length === 1) return found[0]!;
  if (found.length === 0) return ref;
  return { error: `"${ref}" matches ${found.length} runs (${found.slice(0, 3).join(", ")}…); type more of the id` };
}

export function paletteCommand(text: string, snap: ConsoleSnapshot): PaletteCommand {
  const [word = "", ...rest] = text.trim().split(/\s+/);
  const arg = rest.join(" ");
  switch (word) {
    case "q":
    case "q!":
    case "quit":
      return { kind: "quit" };
    case "help":
    case "?":
      return { kind: "help" };
    case "runs":
    case "r":
      return { kind: "runs" };
    case "interrupts":
    case "i":
      return { kind: "view", view: { kind: "interrupts" } };
    case "schedules":
      return { kind: "view", view: { kind: "schedules" } };
    case "run": {
      if (!arg) return { kind: "error", message: "usage: :run <run id>" };
      // A run id is one word: what follows it (a key typed on after enter, in one burst) is not.
      const found = findRun(rest[0]!, snap);
      return typeof found === "string" ? { kind: "view", view: { kind: "run", runId: found } } : { kind: "error", message: found.error };
    }
    default:
      return { kind: "error", message: `unknown command ":${word}" (try runs, interrupts, schedules, run <id>, help, q)` };
  }
}

export function paletteSuggestions(text: string, snap: ConsoleSnapshot): string[] {
  const typed = text.trimStart();
  if (typed.startsWith("run ")) {
    const ref = typed.slice(4).trim();
    return [...snap.runs.keys()].filter((id) => id.startsWith(ref)).map((id) => `run ${id}`);
  }
  return WORDS.filter((w) => w.startsWith(typed) && w !== typed);
}
