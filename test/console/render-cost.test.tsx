import { EventEmitter } from "node:events";
import { render } from "ink";
import { afterEach, expect, it } from "vitest";
import { MemoryStore, type NewEvent } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { Console, RENDER_OPTIONS } from "../../source/console/app.js";
import { diffedScreen } from "../../source/console/screen-diff.js";
import { LiveFeed, type Change } from "../../source/console/live.js";
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
  const changes: { at: number; change: Change }[] = [];
  feed.listen((change) => changes.push({ at: Date.now(), change }));
  feed.start(await store.lastEventSeq());
  // 2 s of 200 events a second.
  const end = Date.now() + 2_000;
  let written = 0;
  while (Date.now() < end) {
    await store.commit({ id: newId("c"), runId: "run-busy", fence: claim.fence, events: [event(), event()] });
    written += 2;
    await sleep(10);
  }
  await sleep(400);
  expect(changes.reduce((n, c) => n + c.change.events.length, 0)).toBe(written);
  // About one change each 200 ms while they keep coming (100 ms windows gave twice as many).
  expect(changes.length).toBeLessThanOrEqual(12);
  // After a quiet moment, one event is handed on within the short window.
  await sleep(600);
  const before = changes.length;
  const at = Date.now();
  await store.commit({ id: newId("c"), runId: "run-busy", fence: claim.fence, events: [event()] });
  await sleep(250);
  expect(changes.length).toBe(before + 1);
  expect(changes.at(-1)!.at - at).toBeLessThan(200);
});

/** A terminal the console draws into: every write is kept. */
class Terminal extends EventEmitter {
  columns = 100;
  rows = 30;
  isTTY = true;
  writes: string[] = [];
  write = (data: string) => (this.writes.push(data), true);
}

/**
 * What Ink reads keys from: `press` hands it one chunk, as a terminal does; a key pressed before
 * Ink listens waits for it, as in a terminal's buffer.
 */
function keyboard() {
  let chunk: string | null = null;
  const stdin = Object.assign(new EventEmitter(), { isTTY: true, setEncoding() {}, setRawMode() {}, ref() {}, unref() {}, read: () => [chunk, (chunk = null)][0] });
  stdin.on("newListener", (event) => {
    if (event === "readable" && chunk !== null) setImmediate(() => stdin.emit("readable"));
  });
  return { stdin, press: (data: string) => ((chunk = data), stdin.emit("readable")) };
}

it("writes to the terminal only the rows that changed, and the screen shows what Ink drew", async () => {
  fx = fixture();
  for (let i = 0; i < 5; i++) await settle(fx.engine, "task-queue");
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
  const settled = async (test: () => boolean) => {
    for (let i = 0; i < 200 && !test(); i++) await sleep(10);
    await sleep(150);
  };
  try {
    await settled(() => shown().filter((l) => l.includes("run-")).length >= 5);
    const full = terminal.writes.join("").length;
    const from = terminal.writes.length;
    keys.press("j");
    await settled(() => terminal.writes.length > from);
    const update = terminal.writes.slice(from).join("").length;
    expect(update).toBeGreaterThan(0);
    // Two rows changed (the cursor moved): a small part of a frame, where a full redraw writes it all.
    expect(update).toBeLessThan(full / 3);
    // Rows that shift and a frame of another view: the terminal shows what Ink drew, row for row.
    expect(shown()).toEqual(drawn.lines());
    for (const key of ["G", "?", "j", "\u001b", "i", "\u001b", "k"]) {
      const before = terminal.writes.length;
      keys.press(key);
      await settled(() => terminal.writes.length > before);
      expect(shown(), `after ${JSON.stringify(key)}`).toEqual(drawn.lines());
    }
  } finally {
    instance.unmount();
  }
});
