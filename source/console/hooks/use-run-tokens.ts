import { useEffect, useRef, useState } from "react";
import { countTokens, emptyTokens, errorMessage, type RunTokens } from "../../../engine/index.js";
import { useServices } from "../context.js";

const PAGE = 1_000;

/**
 * The tokens a run's models used, counted from its `node.log` events: read whole once, then only
 * those after the last one read, whenever the run changes.
 */
export function useRunTokens(runId: string): { tokens?: RunTokens; error?: string } {
  const { store, feed } = useServices();
  const [state, setState] = useState<{ tokens?: RunTokens; error?: string }>({});
  const tally = useRef({ tokens: emptyTokens(), after: 0 });
  useEffect(() => {
    let alive = true;
    let busy = false;
    let again = false;
    const load = async () => {
      if (busy) return void (again = true);
      busy = true;
      try {
        do {
          again = false;
          const { tokens } = tally.current;
          for (;;) {
            const page = await store.readEvents({ runId, types: ["node.log"], after: tally.current.after, limit: PAGE });
            countTokens(page, tokens);
            tally.current.after = page.at(-1)?.seq ?? tally.current.after;
            if (page.length < PAGE) break;
          }
          // A copy: what was drawn does not change under React.
          if (alive) setState({ tokens: structuredClone(tokens) });
        } while (again && alive);
      } catch (error) {
        if (alive) setState((s) => ({ ...s, error: errorMessage(error) }));
      } finally {
        busy = false;
      }
    };
    void load();
    const stop = feed.listen((change) => change.runs.has(runId) && void load());
    return () => {
      alive = false;
      stop();
    };
  }, [store, feed, runId]);
  return state;
}
