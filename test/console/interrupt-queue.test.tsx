import { afterEach, expect, it } from "vitest";
import { Operator } from "../../engine/index.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** The queue's rows, as the runs they belong to, top to bottom. */
const rowsOf = (ui: ConsoleHarness, runIds: readonly string[]) => ui.lines().flatMap((l) => runIds.filter((id) => l.includes(id)));

it("filters the queue by node, workflow, kind, run and text, sorts it by age, workflow and node, and marks with * only what the filter shows", async () => {
  fx = fixture();
  const oslo = await settle(fx.engine, "travel-planner", { city: "Oslo" });
  const ask = await settle(fx.engine, "ask");
  const rome = await settle(fx.engine, "travel-planner", { city: "Rome" });
  const refund = await settle(fx.engine, "refund");
  const all = [oslo.id, ask.id, rome.id, refund.id];
  ui = await openConsole({ store: fx.store, columns: 120 });
  await ui.waitFor("⚑ 4 pending");
  await ui.press("i");
  await ui.waitFor("4 pending, oldest first");
  expect(rowsOf(ui, all)).toEqual(all);

  // By node, live as it is typed; enter keeps it.
  await ui.press("/");
  await ui.waitFor("workflow: node: run: kind:");
  await ui.type("node:approve");
  await ui.waitFor("4 pending, 2 shown");
  await ui.press("enter");
  await ui.waitFor("filter: node:approve");
  expect(rowsOf(ui, all)).toEqual([oslo.id, rome.id]);
  // `*` marks what is shown, and a decision takes only those.
  await ui.press("*");
  await ui.waitFor("2 marked");
  await ui.press("esc");
  await ui.waitFor("4 pending, oldest first · 2 marked");

  // Other keys, and free text (a word with a colon that names no key is text).
  const shows = async (filter: string, expected: string[]) => {
    await ui!.press("/", "ctrl-u");
    await ui!.type(filter);
    await ui!.press("enter");
    await ui!.waitFor(`filter: ${filter}`);
    expect(rowsOf(ui!, all), filter).toEqual(expected);
  };
  await shows("w:refund", [refund.id]);
  await shows("kind:node", [ask.id, refund.id]);
  await shows(`run:${rome.id.slice(-5)}`, [rome.id]);
  await shows("city=rome", [rome.id]);
  await shows("issueRefund?", [refund.id]);
  await ui.press("esc");
  await ui.waitFor((f) => f.includes("4 pending, oldest first") && !f.includes("filter:"));

  // Sorts: by workflow, by node, turned round.
  await ui.press("s");
  await ui.waitFor("4 pending, workflow, A to Z");
  expect(rowsOf(ui, all)).toEqual([ask.id, refund.id, oslo.id, rome.id]);
  await ui.press("s");
  await ui.waitFor("4 pending, node, A to Z");
  expect(rowsOf(ui, all)).toEqual([oslo.id, rome.id, ask.id, refund.id]);
  await ui.press("S");
  await ui.waitFor("4 pending, node, Z to A");
  expect(rowsOf(ui, all)).toEqual([refund.id, ask.id, oslo.id, rome.id]);

  // The two marked ones are approved; the others stay.
  await ui.press("a");
  await ui.waitFor("Approve 2 interrupts?");
  await ui.press("tab", "enter");
  await ui.waitFor("approved 2 interrupts");
  const left = await fx.store.listInterrupts({ status: "pending" });
  expect(left.map((i) => i.runId).sort()).toEqual([ask.id, refund.id].sort());
});

it("flags a state edited since the question was asked, and after an approval says the run asked again because of it", async () => {
  fx = fixture();
  const run = await settle(fx.engine, "travel-planner", { city: "Oslo" });
  ui = await openConsole({ store: fx.store, columns: 120 });
  await ui.waitFor("⚑ 1 pending");
  await ui.press("i");
  await ui.waitFor("1 pending, oldest first");
  await ui.press("enter");
  await ui.waitFor("budget: 1200");
  // Someone else edits the state while the panel is open.
  await new Operator(fx.store, { actor: "bob" }).updateState(run.id, [{ op: "replace", path: "/budget", value: 900 }]);
  const frame = await ui.waitFor("⚠ the state changed since it was asked");
  expect(frame.replace(/\s*\n\s*/g, " ")).toMatch(/⚠ the state changed since it was asked \(checkpoint 3 → 4, by bob at \d\d:\d\d:\d\d: \$\.budget\): what it shows may be out of date, and answering may make it ask again/);
  await ui.press("a");
  const joined = (frame: string) => frame.replace(/\s*\n\s*/g, " ");
  const again = joined(await ui.waitFor((f) => /int-\S+ was answered, and run \S+ asked again at approve \(int-\S+\): the state changed since it was asked/.test(joined(f))));
  expect(again).toContain("i lists the new question");
  // The decision's own outcome said so first (the worker may ask again before a poll sees it).
  expect(ui.frames().some((f) => /✓ resolved int-\S+ with approve; the state changed since it was asked \(checkpoint 3 → 4/.test(joined(f)))).toBe(true);
  const [asked] = await fx.store.listInterrupts({ runId: run.id, status: "pending" });
  expect(asked!.request.show).toMatchObject({ budget: 900 });
});

it("does not say a node asked again when a loop merely comes round to it on a later step", async () => {
  fx = fixture();
  const handle = await fx.engine.start("task-queue", {}, { interruptBefore: ["work"] });
  const run = await handle.wait({ timeoutMs: 10_000 });
  ui = await openConsole({ store: fx.store, columns: 120, initial: { kind: "run", runId: run.id } });
  await ui.waitFor("⚑ 1 pending");
  await ui.press("o");
  await ui.waitFor('About to run "work"');
  await new Operator(fx.store, { actor: "bob" }).updateState(run.id, [{ op: "replace", path: "/done", value: 1 }]);
  await ui.waitFor("⚠ the state changed since it was asked");
  await ui.press("a");
  // The loop comes round to work again (done 2 < 3): a new question at a later step, not this one asked again.
  const [next] = await until(async () => (await fx!.store.listInterrupts({ runId: run.id, status: "pending" })).filter((i) => i.step > 1));
  await ui.waitFor(new RegExp(`task-queue@\\w{8}  step ${next!.step}  ⚑ 1`));
  // The screen may show the new step before the live feed passes on the question's event: a while is given for a wrong "asked again".
  const saidAgain = await ui.waitFor("asked again", 2_000).then(
    () => true,
    () => false,
  );
  expect(saidAgain).toBe(false);
});

async function until<T>(read: () => Promise<T[]>): Promise<T[]> {
  for (let i = 0; i < 200; i++) {
    const found = await read();
    if (found.length > 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("never came");
}

it("on a narrow screen keeps what tells the rows apart: the question, else the values each shows, else its run", async () => {
  fx = fixture();
  const ask = await settle(fx.engine, "ask");
  const refund = await settle(fx.engine, "refund");
  ui = await openConsole({ store: fx.store, columns: 60 });
  await ui.waitFor("⚑ 2 pending");
  await ui.press("i");
  await ui.waitFor("2 pending, oldest first");
  // A row past its number and age: what tells it from the others.
  const rows = () => ui!.lines().filter((l) => /^.\s*\d+ +\S+ /.test(l) && !l.includes("AGE")).map((l) => l.slice(10).trimEnd());
  const header = () => ui!.lines().find((l) => l.includes("AGE"))!;
  // Different questions: the question has the room.
  expect(header()).toMatch(/# +AGE NODE +QUESTION\s*$/);
  expect(rows()).toEqual([expect.stringMatching(/^choose +Which branch should I deploy\?/), expect.stringMatching(/^refund +Run issueRefund\?/)]);

  // The same node asking the same question in two runs: the values each shows tell them apart.
  const oslo = await settle(fx.engine, "travel-planner", { city: "Oslo" });
  const rome = await settle(fx.engine, "travel-planner", { city: "Rome" });
  await ui.waitFor("4 pending, oldest first");
  expect(header()).toMatch(/# +AGE NODE +SHOWS +QUESTION\s*$/);
  const shown = rows();
  expect(shown.slice(2)).toEqual([expect.stringMatching(/^approve +city=Oslo bud… +Book this trip\?/), expect.stringMatching(/^approve +city=Rome bud… +Book this trip\?/)]);
  expect(new Set(shown).size).toBe(4);

  // Two that show the same values too: their runs tell them apart.
  const again = await settle(fx.engine, "travel-planner", { city: "Oslo" });
  await ui.waitFor("5 pending, oldest first");
  expect(header()).toMatch(/# +AGE RUN +NODE +QUESTION\s*$/);
  const withRuns = rows();
  expect(new Set(withRuns).size).toBe(5);
  [ask, refund, oslo, rome, again].forEach((run, i) => expect(withRuns[i]).toContain(run.id));
  expect(Math.max(...ui.lines().map((l) => [...l].length))).toBeLessThanOrEqual(60);
});

it("n and N in the operator panel walk the queue as it is shown: the filter's interrupts, in its order", async () => {
  fx = fixture();
  const oslo = await settle(fx.engine, "travel-planner", { city: "Oslo" });
  const ask = await settle(fx.engine, "ask");
  const rome = await settle(fx.engine, "travel-planner", { city: "Rome" });
  const lisbon = await settle(fx.engine, "travel-planner", { city: "Lisbon" });
  await settle(fx.engine, "refund");
  ui = await openConsole({ store: fx.store, columns: 120 });
  await ui.waitFor("⚑ 5 pending");
  await ui.press("i");
  await ui.waitFor("5 pending, oldest first");
  await ui.press("/");
  await ui.waitFor("workflow: node: run: kind:");
  await ui.type("node:approve");
  await ui.press("enter");
  await ui.waitFor("filter: node:approve");
  await ui.press("S");
  await ui.waitFor("5 pending, 3 shown, newest first");
  await ui.press("enter");
  // The panel's header: which of the queue's rows it is, and the run it asks for.
  const at = async (n: number, run: string) => {
    const frame = await ui!.waitFor(`Interrupt ${n} of 3 (filter: node:approve)  approval at approve  ${run}`);
    expect(frame).not.toContain(ask.id);
  };
  await at(1, lisbon.id);
  await ui.press("n");
  await at(2, rome.id);
  await ui.press("n");
  await at(3, oslo.id);
  await ui.press("n");
  await at(1, lisbon.id);
  await ui.press("N");
  await at(3, oslo.id);
  // Back in the queue, its filter and order are as they were.
  await ui.press("esc");
  await ui.waitFor("5 pending, 3 shown, newest first");
});

it("a bulk approval's confirmation lists what each marked interrupt proposes: run, node, the tool's arguments or the values shown, cut to the screen", async () => {
  fx = fixture();
  const refund = await settle(fx.engine, "refund");
  const trips: string[] = [];
  for (const city of ["Oslo", "Rome", "Kyiv", "Lima", "Pune", "Baku", "Doha", "Riga", "Oran", "Bonn", "Nice", "Graz"]) trips.push((await settle(fx.engine, "travel-planner", { city, budget: 1000 + trips.length })).id);
  ui = await openConsole({ store: fx.store, columns: 60, rows: 16 });
  await ui.waitFor("⚑ 13 pending");
  await ui.press("i");
  await ui.waitFor("13 pending, oldest first");
  await ui.press("*");
  await ui.waitFor("13 marked");
  await ui.press("a");
  const frame = await ui.waitFor("Approve 13 interrupts?");
  const listed = frame.split("\n").filter((l) => l.startsWith("▌"));
  expect(listed).toContainEqual(expect.stringMatching(new RegExp(`^▌ ${refund.id} refund issueRefund \\{"orderId":"A-1001","a…$`)));
  expect(listed).toContainEqual(expect.stringMatching(new RegExp(`^▌ ${trips[0]} approve city: "Oslo" · budget: 1000`)));
  expect(listed).toContainEqual(expect.stringMatching(new RegExp(`^▌ ${trips[1]} approve city: "Rome" · budget: 1001`)));
  // A line longer than the screen is cut, not broken over rows; what does not fit is counted.
  expect(Math.max(...frame.split("\n").map((l) => [...l].length))).toBeLessThanOrEqual(60);
  const more = listed.find((l) => l.includes("more (a taller terminal shows them)"));
  const shown = listed.filter((l) => trips.some((id) => l.includes(id)) || l.includes(refund.id)).length;
  expect(more).toBe(`▌ … and ${13 - shown} more (a taller terminal shows them)`);
  expect(shown).toBeGreaterThanOrEqual(4);
  // Taller, every one of them is listed.
  await ui.resize(60, 40);
  await ui.waitFor((f) => [refund.id, ...trips].every((id) => f.includes(id)));
  await ui.press("esc");
  await ui.waitFor("approve not confirmed; nothing sent");
});
