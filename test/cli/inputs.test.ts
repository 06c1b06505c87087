import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../source/cli/errors.js";
import { parsePath, readJsonArgument, setOperation, statePatch } from "../../source/cli/inputs.js";

describe("--set path=value, --patch and --input as people type them", () => {
  it("reads paths in dotted, $-prefixed, bracketed and JSON Pointer forms", () => {
    expect(parsePath("operation.limit")).toEqual(["operation", "limit"]);
    expect(parsePath("$.tasks[0].title")).toEqual(["tasks", 0, "title"]);
    expect(parsePath('options["two words"]')).toEqual(["options", "two words"]);
    expect(parsePath("/a~1b/0")).toEqual(["a/b", "0"]);
    expect(() => parsePath("a b")).toThrow(UsageError);
    expect(() => parsePath("$")).toThrow(/names no key/);
  });

  it("replaces what exists (an array item is replaced, not inserted before) and adds what does not", () => {
    const state = { tasks: ["a", "b"], operation: { limit: 5 } };
    expect(setOperation("tasks[1]=c", state)).toEqual({ op: "replace", path: "/tasks/1", value: "c" });
    expect(setOperation("tasks[2]=d", state)).toEqual({ op: "add", path: "/tasks/2", value: "d" });
    expect(setOperation("operation.limit=10", state)).toEqual({ op: "replace", path: "/operation/limit", value: 10 });
    expect(setOperation("operation.note=hello world", state)).toEqual({ op: "add", path: "/operation/note", value: "hello world" });
    expect(setOperation('operation.flags={"dry":true}', state).value).toEqual({ dry: true });
    expect(() => setOperation("limit", state)).toThrow("--set limit: expected path=value");
  });

  it("takes JSON inline or from a file, naming the flag when it is not JSON", () => {
    const dir = mkdtempSync(join(tmpdir(), "pitwall-inputs-"));
    writeFileSync(join(dir, "p.json"), '{"a":1}');
    expect(readJsonArgument("patch", `@${join(dir, "p.json")}`)).toEqual({ a: 1 });
    expect(() => readJsonArgument("input", "{a:1}")).toThrow(/^--input is not valid JSON: /);
    expect(() => readJsonArgument("patch", `@${join(dir, "none.json")}`)).toThrow(/^--patch: cannot read .*none\.json: no such file$/);
  });

  it("combines --patch and --set into one JSON Patch, and refuses to mix --set with a partial-state patch", async () => {
    const state = async () => ({ n: 1 });
    expect(await statePatch({ patch: '[{"op":"remove","path":"/m"}]', set: ["n=2"] }, state)).toEqual([
      { op: "remove", path: "/m" },
      { op: "replace", path: "/n", value: 2 },
    ]);
    expect(await statePatch({ patch: '{"n":3}' }, state)).toEqual({ n: 3 });
    await expect(statePatch({ patch: '{"n":3}', set: ["n=2"] }, state)).rejects.toThrow("--patch must be a JSON Patch array to be combined with --set");
  });
});
