import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";

const TICKETS = {
  name: "tickets",
  state: { ticket: { type: "object", properties: { priority: { type: "integer", maximum: 5 } }, required: ["priority"] } },
  start: "a",
  nodes: { a: { kind: "wait", seconds: 0, next: "END" } },
};

describe("JSON people type: where it broke, and what is wrong with it", () => {
  const cli = cliHarness();
  const file = () => {
    const path = join(cli.dir, "tickets.json");
    writeFileSync(path, JSON.stringify(TICKETS));
    return path;
  };

  it("gives the line and column of a syntax error in --input, inline or from a file, in the config file and in a model script", async () => {
    writeFileSync(join(cli.dir, "input.json"), '{\n  "ticket": { "priority": 1 }\n  "more": 2\n}\n');
    writeFileSync(join(cli.dir, "config.json"), '{ "store": "sqlite:x.db", }');
    writeFileSync(join(cli.dir, "script.json"), '{ "calls": [\n  { "node": "a" "call": "model" } ] }');
    const [inline, fromFile, config, script] = await Promise.all([
      cli.run(["start", file(), "--input", '{"ticket": {"priority": 1}']),
      cli.run(["start", file(), "--input", "@input.json"]),
      cli.run(["runs", "--config", "config.json"]),
      cli.run(["worker", "--once"], { PITWALL_LLM_SCRIPT: join(cli.dir, "script.json") }),
    ]);
    expect(inline.stderr).toBe("pitwall start: --input is not valid JSON: line 1, column 27: expected '}'\n");
    expect(fromFile.stderr).toBe("pitwall start: --input (from input.json) is not valid JSON: line 3, column 3: expected ','\n");
    expect(config.stderr).toBe(`pitwall runs: config ${join(cli.dir, "config.json")} is not valid JSON: line 1, column 27: expected a property name in double quotes\n`);
    expect(script.stderr).toContain(`the model script ${join(cli.dir, "script.json")} is not valid JSON: line 2, column 17: expected ','`);
    expect([inline.code, fromFile.code, config.code, script.code]).toEqual([2, 2, 2, 2]);
  });

  it("shows a misspelt input key first, with the key meant, and words bounds for people", async () => {
    const [typo, big, fraction] = await Promise.all([
      cli.run(["start", file(), "--input", '{"tickte": {"priority": 1}}']),
      cli.run(["start", file(), "--input", '{"ticket": {"priority": 7}}']),
      cli.run(["start", file(), "--input", '{"ticket": {"priority": 1.5}}']),
    ]);
    expect(typo.stderr).toBe('pitwall start: run input is invalid at $: unknown key tickte (did you mean "ticket"?) ($.ticket: missing (expected object))\n');
    expect(big.stderr).toBe("pitwall start: run input is invalid at $.ticket.priority: must be at most 5, got 7\n");
    expect(fraction.stderr).toBe("pitwall start: run input is invalid at $.ticket.priority: must be an integer, got 1.5\n");
  });
});
