import { useEffect, useRef, useState } from "react";
import { countTokens, emptyTokens, errorMessage, type RunTokens } from "../../../engine/index.js";
import { useServices } from "../context.js";
import { loadOnChange } from "./serial-load.js";

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
    return loadOnChange(
      feed,
      runId,
      async (alive) => {
        const { tokens } = tally.current;
        for (;;) {
          const page = await store.readEvents({ runId, types: ["node.log"], after: tally.current.after, limit: PAGE });
          countTokens(page, tokens);
          tally.current.after = page.at(-1)?.seq ?? tally.current.after;
          if (page.length < PAGE) break;
        }
        // A copy: what was drawn does not change under React.
        if (alive()) setState({ tokens: structuredClone(tokens) });
      },
      (error) => setState((s) => ({ ...s, error: errorMessage(error) })),
    );
  }, [store, feed, runId]);
  return state;
}
