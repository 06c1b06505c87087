import { EventEmitter } from "node:events";
import { afterEach, expect, it, vi } from "vitest";
import { MemoryStore, type NewEvent } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { loadConsole } from "../../source/console/index.js";
import { diffedScreen } from "../../source/console/screen-diff.js";
import { LiveFeed, type Change } from "../../source/console/live.js";
import { until } from "../support/engine.js";
import { ScreenModel } from "../support/screen.js";
import { fixture, settle, type Fixture } from "./fixtures.js";

let fx: Fixture | undefined;
let feed: LiveFeed | undefined;
afterEach(async () => {
  await feed?.stop();
  await fx?.close();
  [fx, feed] = [undefined, undefined];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("hands a stream of events to the screen a few times a second, and an event after a quiet moment at once", async () => {
  const store = new MemoryStore();
  await store.createRun(newRun({ id: "run-busy", workflow: { name: "w", version: "v" }, state: {}, actor: "test" }));
  const claim = (await store.claimRun({ owner: "test", leaseMs: 60_000, runId: "run-busy" }))!;
  const event = (): NewEvent => ({ runId: "run-busy", taskId: null, traceId: "run-busy", spanId: null, type: "node.log", actor: "worker:test", payload: { node: "n", level: "info", message: "x" }, time: Date.now() }) as NewEvent;
  feed = new LiveFeed(store, { coalesceMs: 100 });
  const changes: Change[] = [];
  feed.listen((change) => changes.push(change));
  feed.start(await store.lastEventSeq());
  // 2 s of 200 events a second.
  const end = Date.now() + 2_000;
  let written = 0;
  while (Date.now() < end) {
    await store.commit({ id: newId("c"), runId: "run-busy", fence: claim.fence, events: [event(), event()] });
    written += 2;
    await sleep(10);
  }
  const handed = () => changes.reduce((n, c) => n + c.events.length, 0);
  await until(() => handed() >= written, 5_000, "every event handed to the screen");
  expect(handed()).toBe(written);
  // About one change each 200 ms while they keep coming (100 ms windows gave twice as many).
  expect(changes.length).toBeLessThanOrEqual(12);
  // After a quiet moment, one event is handed on within the short window, not the busy one:
  // before a timer of the busy window's 200 ms, started as it is committed, goes off (timers go
  // off in order, however late a loaded machine runs them; a wall-clock bound failed there).
  await sleep(600);
  const before = changes.length;
  const afterBusyWindow = new Promise<number>((resolve) => setTimeout(() => resolve(changes.length), 200));
  await store.commit({ id: newId("c"), runId: "run-busy", fence: claim.fence, events: [event()] });
  expect(await afterBusyWindow).toBe(before + 1);
});

/** A terminal the console draws into: every write is kept. */
class Terminal extends EventEmitter {
  columns = 100;
  rows = 30;
  isTTY = true;
  writes: string[] = [];
  write = (data: string) => (this.writes.push(data), true);
}

/** What Ink reads keys from: `press` hands it one chunk, as a terminal does. */
function keyboard() {
  let chunk: string | null = null;
  const stdin = Object.assign(new EventEmitter(), { isTTY: true, setEncoding() {}, setRawMode() {}, ref() {}, unref() {}, read: () => [chunk, (chunk = null)][0] });
  return { stdin, press: (data: string) => ((chunk = data), stdin.emit("readable")) };
}

it("writes to the terminal only the rows that changed, and the screen shows what Ink drew", async () => {
  // Ink as the console loads it: Ink imported where CI is set (a CI runner) draws nothing until exit.
  const { render, Console, RENDER_OPTIONS } = await loadConsole();
  fx = fixture();
  // Runs that ended two hours ago, their worker stopped since: no age ticks while the test
  // watches, so a key's update holds only what the key changed.
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() - 2 * 3_600_000, shouldAdvanceTime: true });
  try {
    for (let i = 0; i < 5; i++) await settle(fx.engine, "task-queue");
    await fx.engine.close();
  } finally {
    vi.useRealTimers();
  }
  const terminal = new Terminal();
  const keys = keyboard();
  // What Ink writes (whole frames) goes to one screen; what the terminal gets, to another.
  const drawn = new ScreenModel(terminal.columns, terminal.rows);
  const diffed = diffedScreen(terminal as unknown as NodeJS.WriteStream).stream;
  const stdout = new Proxy(diffed, {
    get: (target, property) => (property === "write" ? (data: string) => (drawn.feed(data), target.write(data)) : Reflect.get(target, property)),
  });
  const editor = { edit: () => ({ status: "unchanged" as const }) };
  const instance = render(<Console store={fx.store} actor="test" readOnly={false} storeLabel="memory:test" editor={editor} clipboard={() => undefined} />, {
    stdout,
    stdin: keys.stdin as never,
    stderr: terminal as never,
    exitOnCtrlC: false,
    patchConsole: false,
    ...RENDER_OPTIONS,
  });
  const shown = () => {
    const screen = new ScreenModel(terminal.columns, terminal.rows);
    screen.feed(terminal.writes.join(""));
    return screen.lines();
  };
  // Waits until `test` holds (it must), then for the frames Ink draws right after (throttled).
  const settled = async (test: () => boolean, what: string) => {
    for (const deadline = Date.now() + 10_000; !test(); await sleep(10)) {
      if (Date.now() > deadline) throw new Error(`waiting for ${what}: not there within 10 s; the terminal shows:\n${shown().join("\n")}`);
    }
    await sleep(150);
  };
  try {
    // The list and the counts read after it: the console has nothing more to draw by itself.
    await settled(() => shown().filter((l) => l.includes("run-")).length >= 5 && shown().some((l) => l.includes("✓5")), "the runs list and its counts");
    const full = terminal.writes.join("").length;
    const from = terminal.writes.length;
    keys.press("j");
    await settled(() => terminal.writes.length > from, "a frame for j");
    const update = terminal.writes.slice(from).join("").length;
    // Two rows changed (the cursor moved): a small part of a frame, where a full redraw writes it all.
    expect(update).toBeLessThan(full / 3);
    // Rows that shift and a frame of another view: the terminal shows what Ink drew, row for row.
    expect(shown()).toEqual(drawn.lines());
    for (const key of ["G", "?", "j", "\u001b", "i", "\u001b", "k"]) {
      const before = terminal.writes.length;
      keys.press(key);
      await settled(() => terminal.writes.length > before, `a frame for ${JSON.stringify(key)}`);
      expect(shown(), `after ${JSON.stringify(key)}`).toEqual(drawn.lines());
    }
  } finally {
    instance.unmount();
  }
});
