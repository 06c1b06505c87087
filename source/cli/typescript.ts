import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const REGISTERED = Symbol.for("pitwall.typescript");

/**
 * Lets `import()` load TypeScript actions modules. The bin registers tsx itself when it runs the
 * sources; the compiled build registers it here, only when a `.ts` module is actually loaded,
 * because registering costs a loader thread that most commands do not need.
 */
export async function enableTypeScript(paths: readonly string[]): Promise<void> {
  const global = globalThis as { [REGISTERED]?: boolean };
  if (global[REGISTERED] || !paths.some((p) => /\.[cm]?tsx?$/.test(p))) return;
  const { register } = await import("tsx/esm/api");
  register({ tsconfig: join(packageRoot(), "tsconfig.json") });
  global[REGISTERED] = true;
}

/** The folder holding pitwall's package.json, from the sources or from dist/. */
export function packageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // source/cli → root, dist/source/cli → root
  return here.includes(`${join("dist", "source")}`) ? join(here, "..", "..", "..") : join(here, "..", "..");
}
