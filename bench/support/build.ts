import { rmSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error The bin's helpers are plain JavaScript without types.
import { buildIsFresh, root } from "../../bin/build-state.js";
// @ts-expect-error The bin's helpers are plain JavaScript without types.
import { build, bundle } from "../../bin/build.js";

/** The root of the repository (where the bin runs from). */
export const ROOT = root as string;

/** Child processes run the compiled CLI, as an installed `pitwall` does: build it if needed. */
export async function ensureBuild(): Promise<void> {
  if (buildIsFresh()) return;
  console.log("building dist/ (npm run build) for the child processes…");
  await (build as () => Promise<void>)();
}

/**
 * The console's parts that the console benchmark's child process loads (console-parts.ts, and
 * process-tuning.ts, which must run before React loads), bundled as `npm run build` bundles the
 * console (zod beside them), into a folder under node_modules (where the bundle finds the
 * packages it leaves out). Returns that folder.
 */
export async function bundleConsoleParts(): Promise<string> {
  const outdir = join(ROOT, "node_modules", ".cache", "pitwall-bench", "console");
  rmSync(outdir, { recursive: true, force: true });
  await (bundle as (entryPoints: Record<string, string>, outdir: string) => Promise<void>)(
    { "console-parts": "bench/support/console-parts.ts", "process-tuning": "source/console/process-tuning.ts" },
    outdir,
  );
  return outdir;
}
