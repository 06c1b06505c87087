import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { ended, engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";
import { problemsOf } from "../support/workflow-checks.js";

const state = z.object({ payment: z.unknown().optional(), log: z.array(z.string()).default([]) });
const reducers = { log: "append" } as const;

describe.each(storeFactories)("a signal's wait with routes ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("takes its timeout route when no signal came in time, and its received route when one did (even one without data)", async () => {
    // The signal is sent well within the long wait's time, however loaded the machine.
    const waits = (seconds: number) =>
      workflow(`wait-routes-${seconds}`, { state, reducers })
        .wait("paid", { signal: "paid", seconds, output: "payment", routes: { received: "ship", timeout: "remind" } })
        .node("ship", () => ({ log: ["shipped"] }), { next: "END" })
        .node("remind", () => ({ log: ["reminded"] }), { next: "END" })
        .compile();
    const [short, long] = [waits(0.5), waits(60)];
    const engine = await harness.engine([short, long]);
    const slow = await engine.start(short);
    expect((await ended(engine, slow.id)).status).toBe("succeeded");
    expect((await slow.state()).log).toEqual(["reminded"]);
    const quick = await engine.start(long);
    await until(async () => (await engine.store.getRun(quick.id))?.wakeAt != null || undefined, 10_000, "the wait to park");
    await quick.signal("paid");
    expect((await ended(engine, quick.id)).status).toBe("succeeded");
    expect((await quick.state()).log).toEqual(["shipped"]);
    const [done] = (await engine.store.readEvents({ runId: quick.id, types: ["task.succeeded"] })).filter((e) => (e.payload as { node: string }).node === "paid");
    expect((done!.payload as { route?: string }).route).toBe("received");
  });
});

describe.each(storeFactories)("a signal sent again under its command id ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("gets the first one's outcome (a webhook delivered twice is one signal); another request under that id is refused", async () => {
    const wf = workflow("webhook-twice", { state, reducers }).wait("paid", { signal: "paid", output: "payment", next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await until(async () => ((await engine.store.getRun(run.id))?.status === "paused" ? true : undefined), 10_000, "the run to wait");
    const first = await engine.operator("hook").signal(run.id, "paid", { amount: 5 }, { commandId: "hook-123" });
    const again = await engine.operator("hook").signal(run.id, "paid", { amount: 5 }, { commandId: "hook-123" });
    expect(again.command.id).toBe(first.command.id);
    expect(again.result.signalId).toBe(first.result.signalId);
    await expect(engine.operator("hook").signal(run.id, "paid", { amount: 6 }, { commandId: "hook-123" })).rejects.toThrow("command hook-123 already exists (sent by operator:hook)");
    await expect(engine.operator("someone").signal(run.id, "paid", { amount: 5 }, { commandId: "hook-123" })).rejects.toThrow("command hook-123 already exists (sent by operator:hook)");
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).payment).toEqual({ amount: 5 });
    expect(await engine.store.readEvents({ runId: run.id, types: ["run.signaled"] })).toHaveLength(1);
  });
});

describe("a signal's wait routes, as written", () => {
  const doc = (paid: Record<string, unknown>) => ({
    name: "w",
    start: "paid",
    state: { n: { type: "number" } },
    nodes: { paid: { kind: "wait", ...paid }, a: { action: "tasks.a", next: "END" } },
  });
  const messages = (d: unknown) => problemsOf(d).map((p) => `${p.severity} ${p.path.replace(/^\$\./, "")} ${p.message}`);

  it("accepts received/timeout on a wait for a signal with seconds, and a received route alone without a warning", () => {
    expect(messages(doc({ signal: "paid", seconds: 60, routes: { received: "a", timeout: "END" } }))).toEqual([]);
    expect(messages(doc({ signal: "paid", routes: { received: "a" } }))).toEqual([]);
  });

  it("refuses them on a timer, a timeout without seconds, other keys beside them, and a routeOn that would never be read", () => {
    expect(messages(doc({ seconds: 60, routes: { timeout: "a" } }))).toContain('error nodes.paid.routes the "received" and "timeout" routes are a signal\'s wait\'s: this wait has no `signal`');
    expect(messages(doc({ signal: "paid", routes: { received: "a", timeout: "END" } }))).toContain(
      'error nodes.paid.routes.timeout a wait for a signal without `seconds` never times out: give it seconds, or leave the "timeout" route out',
    );
    expect(messages(doc({ signal: "paid", seconds: 5, routes: { received: "a", late: "END" } }))).toContain('error nodes.paid.routes.late a signal\'s wait chooses "received" or "timeout": route "late" is never taken');
    expect(messages(doc({ signal: "paid", seconds: 5, routes: { received: "a" } }))).toContain(
      'error nodes.paid.routes a run would fail when its 5 s run out: add the "timeout" route, or a default',
    );
    expect(messages(doc({ signal: "paid", seconds: 5, routes: { received: "a" }, default: "END" }))).toEqual([]);
    expect(messages(doc({ signal: "paid", routeOn: "n", seconds: 5, routes: { received: "a", timeout: "END" } }))).toContain(
      'error nodes.paid.routeOn a signal\'s wait with "received"/"timeout" routes chooses by whether the signal came: a routeOn or router would never be read',
    );
  });
});
