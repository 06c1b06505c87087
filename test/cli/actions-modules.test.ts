import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SOURCES_BIN, cliHarness } from "../support/cli.js";

const WORKFLOW = {
  name: "count",
  state: { n: { type: "integer", default: 0 } },
  start: "add",
  nodes: { add: { action: "count.add", next: "END" } },
};

describe("actions modules written in TypeScript, in a project that is not an ES package", () => {
  const cli = cliHarness();

  it("loads a .ts module with type annotations and a relative import, with no package.json around it", async () => {
    const dir = join(cli.dir, "plain-project");
    mkdirSync(dir);
    writeFileSync(join(dir, "workflow.json"), JSON.stringify(WORKFLOW));
    writeFileSync(join(dir, "step.ts"), "export const step: number = 2;\n");
    writeFileSync(
      join(dir, "actions.ts"),
      'import { step } from "./step.js";\nconst add = (s: { n: number }) => ({ n: s.n + step });\nexport default { count: { add } };\n',
    );
    const validated = await cli.run(["validate", join(dir, "workflow.json"), "--actions", join(dir, "actions.ts")]);
    expect([validated.code, validated.stdout]).toEqual([0, expect.stringContaining("valid workflow count")]);

    const { runId } = await cli.json<{ runId: string }>(["start", join(dir, "workflow.json")]);
    const worker = await cli.run(["worker", "--once", "--actions", join(dir, "actions.ts")]);
    expect(worker.stdout).toMatch(new RegExp(`run ${runId} succeeded: after 1 step\\n`));
    expect(await cli.json(["state", runId])).toEqual({ n: 2 });
  });
});

describe("actions modules in every form people write them", () => {
  const cli = cliHarness();
  const validate = (dir: string, modules: string[], bin?: string) =>
    cli.run(["validate", "workflow.json", ...modules.flatMap((m) => ["--actions", m])], {}, { cwd: dir, ...(bin ? { bin } : {}) });
  const project = (name: string, files: Record<string, string>) => {
    const dir = join(cli.dir, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "workflow.json"), JSON.stringify(WORKFLOW));
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
    return dir;
  };
  const ESM = 'import { step } from "./step.js";\nexport default { count: { add: (s) => ({ n: s.n + step }) } };\n';
  const CJS = 'const step = 1;\nmodule.exports = { count: { add: (s) => ({ n: s.n + step }) } };\n';
  const VALID = [0, expect.stringContaining("valid workflow count"), ""];

  it("loads a .js module written with export default in a folder without package.json, beside a .ts module, built or from the sources", async () => {
    const dir = project("esm-js", { "actions.js": ESM, "step.js": "export const step = 1;\n", "tools.ts": "export const tools = {};\n" });
    for (const bin of [undefined, SOURCES_BIN]) {
      for (const modules of [["actions.js"], ["tools.ts", "actions.js"]]) {
        const r = await validate(dir, modules, bin);
        expect([r.code, r.stdout, r.stderr], `${bin ?? "build"} ${modules.join(" ")}`).toEqual(VALID);
      }
    }
  });

  it("loads CommonJS .js, .cjs and ES .mjs modules, built or from the sources", async () => {
    const dir = project("forms", { "actions.js": CJS, "actions.cjs": CJS, "actions.mjs": ESM.replace("./step.js", "./step.mjs"), "step.mjs": "export const step = 1;\n" });
    for (const bin of [undefined, SOURCES_BIN]) {
      for (const module of ["actions.js", "actions.cjs", "actions.mjs"]) {
        const r = await validate(dir, [module], bin);
        expect([r.code, r.stdout, r.stderr], `${bin ?? "build"} ${module}`).toEqual(VALID);
      }
    }
  });

  it("loads the file named, not a .ts file of the same name beside it", async () => {
    const dir = project("js-and-ts", { "actions.js": CJS, "actions.ts": "export default { count: { add: 1 + } };\n" });
    for (const bin of [undefined, SOURCES_BIN]) {
      const r = await validate(dir, ["actions.js"], bin);
      expect([r.code, r.stdout, r.stderr], bin ?? "build").toEqual(VALID);
    }
  });

  it("says what to do with ES syntax in a package that says it is CommonJS", async () => {
    const dir = project("commonjs-package", { "actions.js": ESM, "step.js": "exports.step = 1;\n", "package.json": '{ "type": "commonjs" }' });
    const r = await validate(dir, ["actions.js"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot load actions module actions.js: it is written as an ES module (import/export), but its package.json ("type": "commonjs") makes it CommonJS: name it .mjs (or .mts), or write it with require() and module.exports');
  });

  it("refuses an action two modules export, loads a module named twice once, and says what an export that is no function is", async () => {
    const dir = project("exports", {
      "a.mjs": 'export default { count: { add: (s) => ({ n: s.n + 1 }) }, notfn: 42, send: Promise.resolve() };\n',
      "b.mjs": "export default { count: { add: (s) => s } };\n",
    });
    const twice = await validate(dir, ["a.mjs", "b.mjs"]);
    expect([twice.code, twice.stderr]).toEqual([2, 'pitwall validate: action "count.add" is exported twice (by a.mjs and by b.mjs): rename one (the actions of every loaded module share one set of names)\n']);
    expect(await validate(dir, ["./a.mjs", join(dir, "a.mjs")])).toMatchObject({ code: 0, stderr: "" });

    writeFileSync(join(dir, "workflow.json"), JSON.stringify({ ...WORKFLOW, nodes: { add: { action: "notfn", next: "send" }, send: { action: "send", next: "more" }, more: { action: "count.ad" } } }));
    const r = await validate(dir, ["a.mjs"]);
    expect(r.stdout).toContain('$.nodes.add.action: UNKNOWN_ACTION: action "notfn": a.mjs exports it, but it is the number 42, not a function\n');
    expect(r.stdout).toContain('$.nodes.send.action: UNKNOWN_ACTION: action "send": a.mjs exports it, but it is a Promise, not a function: was the function called? export `send`, not `send()`\n');
    expect(r.stdout).toContain('$.nodes.more.action: UNKNOWN_ACTION: action "count.ad" is not exported by the actions module (did you mean "count.add"?)\n');
  });
});
