#!/usr/bin/env node
// `npm run build`: dist/ from the TypeScript sources. The JavaScript is bundled by esbuild: a
// command starts by loading its modules, and Node loads one file of the engine and the command
// line much faster than the ~240 files tsc writes (a `pitwall` command starts about 0.2 s
// sooner). The engine and the command line share their code through common chunks, so that an
// actions module's `import … from "pitwall"` (dist/engine/index.js) gets the very modules the
// command runs, not a copy; the console is a chunk of its own, loaded by the commands that show
// it. Some packages are bundled in too (EXTERNAL says which are not); zod into a file of its own,
// which engine/zod.ts loads at its first use. tsc writes the type declarations.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { root } from "./build-state.js";

/**
 * The packages left in node_modules; the rest (pure JavaScript: argument parsing, cron, diffs,
 * string widths) are bundled in, each a file fewer for node to find and load at every command's
 * start (together about 0.09 s of CPU, measured on `show`). zod too, its ~100 files one file of
 * CommonJS (ZOD_FILE), which engine/zod.ts requires when a schema is first built — a command that
 * builds none (`runs`, `show`, the console) starts without it, about 60 ms sooner. zod 4 is made
 * to be loaded more than once — `instanceof` asks a schema's traits, not its class,
 * and the registry of descriptions and the settings live on globalThis — so a user's schemas,
 * made with the zod of their project, work with the engine's copy as with their own.
 * better-sqlite3: a native binding. ioredis: loaded only for redis:// stores, and it
 * require()s node's modules. Ink, React and @inkjs/ui: the console, whose chunk finds Ink's files
 * (ink-caches.ts). tsx: registered as a loader for TypeScript actions modules.
 */
const EXTERNAL = ["better-sqlite3", "ioredis", "ink", "react", "@inkjs/ui", "tsx"];

/**
 * zod's `z.locales`, the error messages of some 50 languages (about 360 KB, as much as the rest
 * of zod, which a command parses when it loads zod), reduced to English in the bundle:
 * the engine never picks a language, its messages default to English, and a user who sets
 * another with their own zod (`z.config(z.locales.fr())`) sets it for this copy too, as zod
 * keeps its settings on globalThis.
 */
const englishZodLocales = {
  name: "english-zod-locales",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic[\\/]external|core[\\/]index)\.js$/.test(args.importer) ? { path: "zod-locales-en", namespace: "english-zod-locales", pluginData: args.resolveDir } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "english-zod-locales" }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";\n',
      resolveDir: args.pluginData,
      loader: "js",
    }));
  },
};

/** zod, bundled on its own, beside the output that requires it (engine/zod.ts). */
const ZOD_FILE = "zod.cjs";

/**
 * How the build bundles: what is bundled and how, without what it bundles or where to. The
 * console benchmark bundles the console's parts with these too (bench/support/build.ts, through
 * `bundle`), so that it measures the code a built `pitwall console` runs.
 */
export function bundleOptions() {
  return {
    absWorkingDir: root,
    outbase: ".",
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    external: [...EXTERNAL, "zod"],
    // jsonc-parser's "main" is a UMD build whose require() calls of its own files esbuild cannot follow.
    mainFields: ["module", "main"],
    format: "esm",
    platform: "node",
    target: "node20",
    tsconfig: join(root, "tsconfig.json"),
    logLevel: "warning",
    define: { PITWALL_BUNDLED_ZOD: JSON.stringify(`./${ZOD_FILE}`) },
  };
}

/**
 * Bundles `entryPoints` into `outdir` (with `more` options of esbuild's), and zod into ZOD_FILE
 * beside the output holding engine/zod.ts, which requires it from there. Nothing else may import
 * zod: a module that did would load it at every command's start again.
 */
export async function bundle(entryPoints, outdir, more = {}) {
  const { build: esbuild } = await import("esbuild");
  const { metafile } = await esbuild({ ...bundleOptions(), entryPoints, outdir, metafile: true, ...more });
  const outputs = Object.entries(metafile.outputs);
  const importer = outputs.find(([, output]) => output.imports.some((imported) => imported.path === "zod"));
  if (importer) throw new Error(`${Object.keys(importer[1].inputs).join(", ")}: one of these imports zod, which only engine/zod.ts may load (with zod())`);
  const loader = outputs.find(([, output]) => Object.hasOwn(output.inputs, "engine/zod.ts"));
  if (!loader) return;
  await esbuild({
    absWorkingDir: root,
    stdin: { contents: 'export { z } from "zod";', resolveDir: root, sourcefile: "zod-for-pitwall.js" },
    outfile: join(root, dirname(loader[0]), ZOD_FILE),
    bundle: true,
    mainFields: ["module", "main"],
    format: "cjs",
    platform: "node",
    target: "node20",
    logLevel: "warning",
    plugins: [englishZodLocales],
    ...more,
  });
}

export async function build() {
  const dist = join(root, "dist");
  rmSync(dist, { recursive: true, force: true });
  await bundle(["engine/index.ts", "source/cli.tsx"], dist, { sourcemap: true, sourcesContent: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const types = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
  if (types.status !== 0) {
    rmSync(dist, { recursive: true, force: true });
    throw new Error("tsc could not write the type declarations (above); dist/ removed");
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    await build();
  } catch (error) {
    process.stderr.write(`build: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
