import type { EventPayloads, EventRecord, InterruptRecord } from "../../engine/index.js";
import type { Ui } from "./context.js";
import type { LiveFeed } from "./live.js";
import { clean } from "./text.js";

/** How long after a decision the console listens for the node asking again. */
const WATCH_MS = 60_000;
const ENDS = new Set(["run.succeeded", "run.failed", "run.canceled"]);

/**
 * After a decision on an interrupt whose run's state changed since it was asked (`why`), the
 * node may ask again under a new interrupt (its `interrupt.created` event names the one it asks
 * again): an answer covers what the node asked about. Listens
 * for that for a while and says it in the footer, with why; returns what stops listening. Started
 * before the decision is sent: the worker may ask again before the decision's answer is read.
 */
export function watchForReask(feed: LiveFeed, ui: Ui, answered: InterruptRecord, why: string): () => void {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    unlisten();
  };
  const unlisten = feed.listen((change) => {
    if (!change.runs.has(answered.runId)) return;
    for (const event of change.events) {
      if (event.runId !== answered.runId) continue;
      if (ENDS.has(event.type)) return stop();
      if (event.type !== "interrupt.created") continue;
      // Only the question the engine records as this one asked again: the same node on a later
      // step (a loop come round to a breakpoint) asks something new.
      const { interruptId, asksAgain } = (event as EventRecord<"interrupt.created">).payload as EventPayloads["interrupt.created"];
      if (asksAgain !== answered.id) continue;
      stop();
      ui.report({
        tone: "info",
        text: clean(`${answered.id} was answered, and run ${answered.runId} asked again at ${answered.node} (${interruptId}): ${why}, and an answer covers what was asked; i lists the new question`),
      });
      return;
    }
  });
  timer = setTimeout(stop, WATCH_MS);
  timer.unref?.();
  return stop;
}
