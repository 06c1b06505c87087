import { existsSync } from "node:fs";
import { register as registerHooks } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const REGISTERED = Symbol.for("pitwall.typescript");
const FORMAT_HOOK = Symbol.for("pitwall.typescript.esm");

/**
 * Resolve hooks that undo what tsx decides for actions modules written as people write them.
 * Node (and so tsx) takes a file in a folder without a package.json "type" for CommonJS: an
 * actions module there written with `export default { ... }` — `.ts`, or `.js`, whose ES syntax
 * Node alone detects but tsx then loads through require() and fails ("Cannot require() ES Module
 * ... in a cycle") — is given to Node as an ES module, or left for Node to detect. And a module
 * named by its full path is that file: tsx maps `actions.js` to an `actions.ts` beside it when
 * the importer is TypeScript. They run on Node's loader thread, hence the source text.
 */
const FORMAT_HOOK_SOURCE = `
import { existsSync, readFileSync } from "node:fs";
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

/** A .js file's format as Node alone decides it: by its package's type, else by its syntax (undefined). */
function jsFormat(file) {
  if (file.endsWith(".mjs")) return "module";
  if (file.endsWith(".cjs")) return "commonjs";
  const type = packageType(file);
  return type === "module" || type === "commonjs" ? type : undefined;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (!result.url.startsWith("file:") || result.url.includes("/node_modules/")) return result;
  if (specifier.startsWith("file:") && specifier !== result.url && /\\.[cm]?jsx?$/.test(specifier) && existsSync(fileURLToPath(specifier))) {
    return { url: specifier, format: jsFormat(fileURLToPath(specifier)), shortCircuit: true };
  }
  const file = fileURLToPath(result.url);
  if (/\\.tsx?$/.test(file)) return packageType(file) === "commonjs" ? result : { ...result, format: "module" };
  if (/\\.jsx?$/.test(file) && result.format === "commonjs") return { ...result, format: jsFormat(file) };
  return result;
}
`;

/**
 * Prepares `import()` of actions modules. TypeScript ones need tsx: the bin registers it when it
 * runs the sources; the compiled build registers it here, only when a `.ts` module is actually
 * loaded, because registering costs a loader thread that most commands do not need. Whenever tsx
 * is in place, the hooks above correct its choices for `.js` and `.ts` modules.
 */
export async function enableTypeScript(paths: readonly string[]): Promise<void> {
  const global = globalThis as { [REGISTERED]?: boolean; [FORMAT_HOOK]?: boolean };
  if (!global[REGISTERED] && !paths.some((p) => /\.[cm]?tsx?$/.test(p))) return;
  if (!global[REGISTERED]) {
    const { register } = await import("tsx/esm/api");
    register({ tsconfig: join(packageRoot(), "tsconfig.json") });
    global[REGISTERED] = true;
  }
  // Registered after tsx, so it runs first and corrects what tsx resolves.
  if (!global[FORMAT_HOOK]) {
    registerHooks(`data:text/javascript,${encodeURIComponent(FORMAT_HOOK_SOURCE)}`);
    global[FORMAT_HOOK] = true;
  }
}

/** The folder holding pitwall's package.json: above the sources, or above dist/ wherever the bundler put this code in it. */
export function packageRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}: reinstall pitwall`);
  }
}
