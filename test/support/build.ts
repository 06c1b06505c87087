import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain JS module shared with `npm run build`, without type declarations
import { build } from "../../bin/build.js";
// @ts-expect-error: a plain JS module shared with the bin, without type declarations
import { buildIsFresh } from "../../bin/build-state.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder of the bundled child scripts (see buildChildScripts). */
    childScripts: string;
  }
}

const ROOT = join(import.meta.dirname, "..", "..");
const CHILDREN = join(import.meta.dirname, "children");
const PREFIX = "pitwall-test-children-";

/**
 * Vitest global setup: builds dist/ when it is missing or older than the sources, so that the
 * many `pitwall` processes the CLI tests spawn start fast. A stale build is never used: the bin
 * falls back to the sources, as it does when the build fails. Then bundles the child scripts.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  if (!(buildIsFresh as () => boolean)()) {
    try {
      await (build as () => Promise<void>)();
    } catch (error) {
      // Type errors stop the build; the tests still run, their commands from the sources.
      console.warn(`no build for the CLI tests (they run the sources, slower): ${(error as Error).message}`);
    }
  }
  const dir = await buildChildScripts();
  project.provide("childScripts", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * The scripts of test/support/children/ (workers and probes that tests start, kill and stop) as
 * plain JavaScript, with the engine sources bundled in: node starts one in about 0.3 s,
 * where loading the engine's TypeScript through tsx took a second, 50 times over in the crash test.
 * Packages stay in node_modules, which the folder is under so that node finds them from there.
 * A folder of this run's own (named by its process id), so that a test run beside it does not
 * rewrite files its children load.
 */
async function buildChildScripts(): Promise<string> {
  const { build: bundle } = await import("esbuild");
  const cache = join(ROOT, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  removeLeftBehind(cache);
  const dir = join(cache, `${PREFIX}${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  // Readable by all, as the sources were: some tests run a child as another user (nobody).
  chmodSync(dir, 0o755);
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
  await bundle({
    absWorkingDir: ROOT,
    entryPoints: readdirSync(CHILDREN).filter((f) => f.endsWith(".ts")).map((f) => join(CHILDREN, f)),
    outdir: dir,
    bundle: true,
    // The engine in a chunk they share, written once rather than into each.
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})],
    // A fixture's `import … from "pitwall"` gets the engine sources, as in the test processes.
    alias: { pitwall: "./engine/index.ts" },
    tsconfig: join(ROOT, "tsconfig.json"),
    logLevel: "warning",
  });
  return dir;
}

/** Removes the folders of test runs that were killed before their teardown (their process is gone). */
function removeLeftBehind(cache: string): void {
  for (const name of readdirSync(cache)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length));
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    rmSync(join(cache, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
