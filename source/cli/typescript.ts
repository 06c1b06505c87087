import { register as registerHooks } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const REGISTERED = Symbol.for("pitwall.typescript");
const ESM_TS = Symbol.for("pitwall.typescript.esm");

/**
 * A resolve hook that loads `.ts` files as ES modules unless their package says
 * `"type": "commonjs"`. Node (and so tsx) treats a file in a folder without a package.json as
 * CommonJS, and an actions module there — `export default { ... }` in a project that is not a
 * package — would fail with a syntax error. Node itself detects ESM syntax in such `.js` files;
 * this gives `.ts` files the same chance. It runs on Node's loader thread, hence the source text.
 */
const ESM_TS_HOOK = `
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function packageType(file) {
  for (let dir = dirname(file); ; ) {
    try {
      return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).type;
    } catch (error) {
      if (error.code !== "ENOENT" && error.code !== "ENOTDIR") return undefined;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (!result.url.startsWith("file:") || !/\\.tsx?$/.test(result.url) || result.url.includes("/node_modules/")) return result;
  return packageType(fileURLToPath(result.url)) === "commonjs" ? result : { ...result, format: "module" };
}
`;

/**
 * Lets `import()` load TypeScript actions modules. The bin registers tsx itself when it runs the
 * sources; the compiled build registers it here, only when a `.ts` module is actually loaded,
 * because registering costs a loader thread that most commands do not need.
 */
export async function enableTypeScript(paths: readonly string[]): Promise<void> {
  if (!paths.some((p) => /\.[cm]?tsx?$/.test(p))) return;
  const global = globalThis as { [REGISTERED]?: boolean; [ESM_TS]?: boolean };
  if (!global[REGISTERED]) {
    const { register } = await import("tsx/esm/api");
    register({ tsconfig: join(packageRoot(), "tsconfig.json") });
    global[REGISTERED] = true;
  }
  // Registered after tsx, so it runs first and hands tsx a format it will compile as ESM.
  if (!global[ESM_TS]) {
    registerHooks(`data:text/javascript,${encodeURIComponent(ESM_TS_HOOK)}`);
    global[ESM_TS] = true;
  }
}

/** The folder holding pitwall's package.json, from the sources or from dist/. */
export function packageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // source/cli → root, dist/source/cli → root
  return here.includes(`${join("dist", "source")}`) ? join(here, "..", "..", "..") : join(here, "..", "..");
}
