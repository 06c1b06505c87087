// @ts-expect-error: a plain JS module shared with `npm run build`, without type declarations
import { build } from "../../bin/build.js";
// @ts-expect-error: a plain JS module shared with the bin, without type declarations
import { buildIsFresh } from "../../bin/build-state.js";

/**
 * Vitest global setup: builds dist/ when it is missing or older than the sources, so that the
 * many `pitwall` processes the CLI tests spawn start fast. A stale build is never used: the bin
 * falls back to the sources, as it does when the build fails.
 */
export default async function setup(): Promise<void> {
  if ((buildIsFresh as () => boolean)()) return;
  try {
    await (build as () => Promise<void>)();
  } catch (error) {
    // Type errors stop the build; the tests still run, their commands from the sources.
    console.warn(`no build for the CLI tests (they run the sources, slower): ${(error as Error).message}`);
  }
}
