import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine, loadActionModules, loadWorkflowFile, openStore, type Store } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { kill, spawnScript, type Child } from "../support/processes.js";

const FIXTURE = new URL("../../fixtures/support-triage/", import.meta.url).pathname;
const LEASE_MS = 800;

const dir = mkdtempSync(join(tmpdir(), "pitwall-agent-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spawnWorker(file: string, ledger: string): Child {
  return spawnScript("llm-worker", [file, ledger, String(LEASE_MS), "250", FIXTURE]);
}

function ledgerCounts(ledger: string): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!existsSync(ledger)) return counts;
  for (const line of readFileSync(ledger, "utf8").split("\n").filter(Boolean)) {
    const { tool } = JSON.parse(line) as { tool: string };
    counts[tool] = (counts[tool] ?? 0) + 1;
  }
  return counts;
}

async function callTask(store: Store, runId: string, call: string) {
  return (await store.listTasks(runId)).find((t) => t.call === call);
}

describe("agent loop: a worker process killed with SIGKILL in the middle", () => {
  it("resumes after the last finished call on another worker, never running a finished tool again", async () => {
    const file = join(dir, "agent.db");
    const ledger = join(dir, "tools.jsonl");
    const store = await openStore(`sqlite:${file}`);
    const workflow = loadWorkflowFile(`${FIXTURE}workflow.json`, await loadActionModules([`${FIXTURE}actions.ts`]));
    const engine = createEngine({ store, worker: false });
    let first: Child | undefined;
    let second: Child | undefined;
    try {
      first = spawnWorker(file, ledger);
      await first.line((l) => "ready" in l);
      const run = await engine.start(workflow, {});

      await until(async () => (await run.get()).status === "paused", 20_000, "the refund's approval");
      const [approval] = await store.listInterrupts({ runId: run.id, status: "pending" });
      expect(approval!.request.data).toMatchObject({ tool: "issueRefund" });
      await engine.operator("ann").resolve(approval!.id, { decision: "approve" });

      // The refund has run and is recorded; the model is thinking about its next turn: kill.
      await until(async () => (await callTask(store, run.id, "model-3"))?.status === "running", 20_000, "the agent's third model call");
      expect((await callTask(store, run.id, "tool-2-issueRefund"))?.status).toBe("succeeded");
      await kill(first);
      expect(ledgerCounts(ledger)).toEqual({ lookupOrder: 1, trackShipment: 1, issueRefund: 1 });

      second = spawnWorker(file, ledger);
      const settled = await run.wait({ timeoutMs: 20_000 });
      expect(settled.status, `${settled.reason} ${JSON.stringify((await store.listTasks(run.id)).map((t) => [t.call, t.status, t.error?.message]))}`).toBe("succeeded");
      expect(ledgerCounts(ledger)).toEqual({ lookupOrder: 1, trackShipment: 1, issueRefund: 1, sendReply: 1 });

      const claims = await store.readEvents({ runId: run.id, types: ["run.claimed"] });
      expect(claims.at(-1)!.payload).toMatchObject({ recovered: true, worker: `llm-child-${second.process.pid}` });
      const interrupted = await callTask(store, run.id, "model-3");
      expect(interrupted!.attempts.map((a) => [a.outcome, a.code ?? null])).toEqual([
        ["failed", "WORKER_LOST"],
        ["succeeded", null],
      ]);
      for (const call of ["model-1", "tool-1-trackShipment", "model-2", "tool-2-issueRefund"]) {
        expect((await callTask(store, run.id, call))!.attempts, call).toHaveLength(1);
      }
      expect((await run.state()).outcome).toMatch(/^closed: Confirmed the parcel was damaged/);
    } finally {
      if (first) await kill(first);
      if (second) await kill(second);
      await engine.close();
      await store.close();
    }
  }, 60_000);
});
