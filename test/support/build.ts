import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
// @ts-expect-error: a plain JS module shared with the bin, without type declarations
import { buildIsFresh, root } from "../../bin/build-state.js";

/**
 * Vitest global setup: compiles dist/ when it is missing or older than the sources, so that the
 * many `pitwall` processes the CLI tests spawn start fast. A stale build is never used: the bin
 * falls back to the sources.
 */
export default function setup(): void {
  if ((buildIsFresh as () => boolean)()) return;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root as string, stdio: "ignore" });
}
