import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain JS module shared with `npm run build`, without type declarations
import { bundle } from "../../bin/build.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

/** What `npm pack` puts in the tarball (the build is there: the test setup made it). */
function packedFiles(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
  return (JSON.parse(out) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
}

// A service's program, compiled as `tsc --init` sets a project up (plus Node's types) and run by
// plain node: what the README's quick start promises an installed package gives.
const APP = `import { z } from "zod";
import { createEngine, WaitTimeoutError, workflow, type RunRecord } from "pitwall";

const wf = workflow("count", { state: z.object({ n: z.number().default(0) }) })
  .node("add", (s) => ({ n: s.n + 1 }), { next: "END" })
  .compile();
const engine = createEngine({ workflows: [wf] });
const settled: RunRecord = await (await engine.start(wf, { n: 41 })).wait({ timeoutMs: 600_000 });
const idle = createEngine({ workflows: [wf], worker: false });
const late = await (await idle.start(wf)).wait({ timeoutMs: 10 }).catch((error: unknown) => error);
console.log(settled.status, (await engine.run(settled.id).state()).n, late instanceof WaitTimeoutError && late.status);
console.log(import.meta.resolve("pitwall"));
await Promise.all([engine.close(), idle.close()]);
`;

const TSCONFIG = {
  compilerOptions: {
    module: "nodenext",
    target: "esnext",
    types: ["node"],
    outDir: "out",
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    strict: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noUncheckedSideEffectImports: true,
    moduleDetection: "force",
    skipLibCheck: true,
  },
};

/** The packages the public declarations import, from dist/engine/index.d.ts through every file it reaches. */
function typeImports(): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const next = [join(ROOT, "dist", "engine", "index.d.ts")];
  for (let file = next.pop(); file !== undefined; file = next.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(/(?:from |import\()"([^"]+)"/g)) {
      if (specifier!.startsWith(".")) next.push(resolve(dirname(file), specifier!.replace(/\.js$/, ".d.ts")));
      else if (!isBuiltin(specifier!)) packages.add(specifier!.startsWith("@") ? specifier!.split("/").slice(0, 2).join("/") : specifier!.split("/")[0]!);
    }
  }
  return packages;
}

describe("the package as npm packs it", () => {
  // Inside the repository, so that the package's dependencies resolve from its node_modules as
  // they would from a service's; the app's own package.json keeps it out of pitwall's scope.
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".tmp", "packed-"));
  const installed = join(dir, "node_modules", "pitwall");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("holds the build with its declarations, the bin and what the demo reads, and no sources, tests or benchmarks", () => {
    const files = packedFiles();
    for (const needed of ["dist/engine/index.js", "dist/engine/index.d.ts", "dist/source/cli.js", "bin/pitwall.js", "fixtures/support-triage/actions.ts", "fixtures/support-triage/script.json", "tsconfig.json", "README.md", "package.json"]) {
      expect(files).toContain(needed);
    }
    expect(files.filter((f) => /^(test|bench|engine|source)\//.test(f) || (f.startsWith("dist/") && /\.tsx?$/.test(f) && !f.endsWith(".d.ts")))).toEqual([]);
    for (const file of files) {
      mkdirSync(dirname(join(installed, file)), { recursive: true });
      cpSync(join(ROOT, file), join(installed, file));
    }
  });

  it("declares only types that its dependencies give a service (a devDependency's would be missing there)", () => {
    const { dependencies } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
    const from = join(ROOT, "dist", "engine", "index.d.ts");
    // The package whose declarations TypeScript takes for each import (zod's own, for zod).
    const providers = [...typeImports()].map((name) => {
      const resolved = ts.resolveModuleName(name, from, options, ts.sys, undefined, undefined, ts.ModuleKind.ESNext).resolvedModule;
      return resolved?.packageId?.name ?? `${name} (no declarations)`;
    });
    expect(providers).toContain("zod");
    // better-sqlite3 stays inside the store: a service type-checks without its types.
    expect(providers).not.toContain("@types/better-sqlite3");
    expect(providers.filter((name) => !(name in dependencies))).toEqual([]);
  });

  it("compiles into a strict TypeScript service and runs under plain node from dist/", () => {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "service", private: true, type: "module" }));
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
    writeFileSync(join(dir, "app.ts"), APP);
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const compiled = spawnSync(process.execPath, [tsc, "-p", "."], { cwd: dir, encoding: "utf8" });
    expect(compiled.stdout + compiled.stderr).toBe("");
    // It exits once its work is done: a wait that ended holds no timer (its deadline is 10 minutes).
    const out = execFileSync(process.execPath, [join(dir, "out", "app.js")], { cwd: dir, encoding: "utf8", timeout: 20_000 });
    expect(out.split("\n")).toEqual(["succeeded 42 queued", `file://${join(installed, "dist", "engine", "index.js")}`, ""]);
  });

  it("holds one copy of the engine, which the command line and `import ... from \"pitwall\"` both load", () => {
    // An actions module's errors and classes must be the ones the command checks them against.
    const built = packedFiles().filter((f) => f.startsWith("dist/") && f.endsWith(".js"));
    const defining = built.filter((f) => /\bPitwallError = class\b|\bclass PitwallError\b/.test(readFileSync(join(ROOT, f), "utf8")));
    expect(defining).toHaveLength(1);
  });

  it("ships zod in a file of its own, and without it falls back to the zod package it depends on (a service that bundled pitwall)", () => {
    const bin = join(installed, "bin", "pitwall.js");
    const workflow = join(installed, "fixtures", "support-triage", "workflow.json");
    expect(readdirSync(join(installed, "dist", "chunks")).filter((f) => f.endsWith(".cjs"))).toEqual(["zod.cjs"]);
    rmSync(join(installed, "dist", "chunks", "zod.cjs"));
    const validated = spawnSync(process.execPath, [bin, "validate", workflow], { cwd: dir, encoding: "utf8" });
    expect([validated.status, validated.stderr]).toEqual([0, ""]);
    expect(validated.stdout).toMatch(/valid workflow support-triage/);
  });

  it("runs its bin from dist/ without the sources, and says so when the build is missing too", () => {
    const bin = join(installed, "bin", "pitwall.js");
    expect(execFileSync(process.execPath, [bin, "--version"], { cwd: dir, encoding: "utf8" }).trim()).toBe(version);
    rmSync(join(installed, "dist"), { recursive: true });
    const broken = spawnSync(process.execPath, [bin, "--version"], { cwd: dir, encoding: "utf8" });
    expect([broken.status, broken.stdout, broken.stderr]).toEqual([1, "", `pitwall: ${installed} holds neither a build (dist/source/cli.js) nor the sources: reinstall the package, or run \`npm run build\` in a clone\n`]);
  });
});

describe("the build", () => {
  it("refuses a module that imports zod itself: only engine/zod.ts loads it, when a schema is first built", async () => {
    mkdirSync(join(ROOT, ".tmp"), { recursive: true });
    const dir = mkdtempSync(join(ROOT, ".tmp", "bundle-"));
    try {
      writeFileSync(join(dir, "eager.ts"), 'import { z } from "zod";\nexport const name = z.string();\n');
      const bundled = (bundle as (entryPoints: string[], outdir: string) => Promise<void>)([join(dir, "eager.ts")], join(dir, "out"));
      await expect(bundled).rejects.toThrow(/eager\.ts: one of these imports zod, which only engine\/zod\.ts may load/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
