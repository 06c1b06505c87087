import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CallView, InterruptRecord } from "../../engine/index.js";
import { cliHarness, writeChargeTools } from "../support/cli.js";

/**
 * A person in $EDITOR at a tool call's approval: logs what it was shown and the file's name, saves an amount the
 * tool's parameters refuse, then a good one once it sees the error.
 */
const EDITOR_SCRIPT = `
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
const file = process.argv[2];
const text = readFileSync(file, "utf8");
appendFileSync(process.env.EDIT_LOG, JSON.stringify({ file: basename(file), text }) + "\\n");
const args = JSON.parse(text.split("\\n").filter((l) => !l.startsWith("//")).join("\\n"));
args.amount = text.includes("ERROR:") ? 5 : "lots";
writeFileSync(file, JSON.stringify(args, null, 2));
`;

describe("pitwall resolve --edit at an agent's tool call", () => {
  const cli = cliHarness();

  it("opens the editor on the proposed arguments, checks them against the tool's parameters, and the tool runs with the edit", async () => {
    const actions = writeChargeTools(cli.dir);
    const file = join(cli.dir, "charge.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "charge",
        state: { out: { type: "string", default: "" } },
        start: "charge",
        nodes: { charge: { kind: "agent", prompt: "Charge ann", tools: ["chargeCard"], requireApproval: ["chargeCard"], output: "out", next: "END" } },
      }),
    );
    const script = join(cli.dir, "charge-script.json");
    writeFileSync(
      script,
      JSON.stringify({
        calls: [
          { node: "charge", call: "model-1", answer: { toolCalls: [{ name: "chargeCard", arguments: { amount: 40 } }] } },
          { node: "charge", call: "model-2", answer: { content: "charged" } },
        ],
      }),
    );
    const env = { PITWALL_LLM_SCRIPT: script };
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    expect((await cli.run(["worker", "--once", "--actions", actions], env)).code).toBe(0);
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", runId]);

    const editor = join(cli.dir, "editor.mjs");
    writeFileSync(editor, EDITOR_SCRIPT);
    const log = join(cli.dir, "edits.log");
    writeFileSync(log, "");
    const r = await cli.run(["resolve", ask!.id, "--edit", "--json"], { EDITOR: `"${process.execPath}" "${editor}"`, VISUAL: "", EDIT_LOG: log });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout)).toMatchObject({ interruptId: ask!.id, runId, decision: "edit" });
    const opened = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { file: string; text: string });
    // Named after what is edited, so that the editor's title says it is the call's arguments.
    expect(opened.map((o) => o.file)).toEqual(["arguments.json", "arguments.json"]);
    const [first, second] = opened.map((o) => o.text);
    expect(first).toMatch(new RegExp(`^// What interrupt ${ask!.id} proposes \\(run ${runId}, paused at charge\\)`));
    expect(first).toMatch(/^\{\n {2}"amount": 40\n\}\n$/m);
    expect(second).toMatch(/^\/\/ ERROR: the edited proposal is invalid at \$\.amount: /m);

    expect((await cli.run(["worker", "--once", "--actions", actions], env)).code).toBe(0);
    const shown = await cli.json<{ status: string; calls: CallView[] }>(["show", runId]);
    expect(shown.status).toBe("succeeded");
    expect(shown.calls.find((c) => c.kind === "tool")).toMatchObject({ tool: "chargeCard", arguments: { amount: 5 }, result: { charged: 5 } });
  });
});
