// One side of the console benchmark, in its own process so that its memory and CPU are its own.
// Plain JavaScript: the console's parts bundled as `npm run build` bundles them (the folder given
// after the run id; bench/support/build.ts), as `pitwall console` itself runs when built, so that
// no TypeScript loader is measured. `console` mode renders the real console into a
// terminal-sized buffer; `console-tsx` the same from the TypeScript sources, as `pitwall` runs
// without a fresh build (the parent starts it with tsx's loader); `baseline` mode only lists the
// runs and follows the store's subscription, the least any live console has to do.
// Protocol: JSON lines on stdout ({ phase: "ready" } then { phase: "done" }); the parent writes
// "measure-idle" on stdin once it has stopped writing events.
import { EventEmitter } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [mode, url, runId, built] = process.argv.slice(2);

const fromSource = mode === "console-tsx";
/** A module of the bundle by its name; from the sources, the module it was bundled from. */
const load = (name, source) => import(fromSource ? new URL(`../../${source}`, import.meta.url).href : pathToFileURL(join(built, `${name}.js`)).href);
// What runConsole does to its process before it loads React (see process-tuning.ts).
if (mode !== "baseline") (await load("process-tuning", "source/console/process-tuning.ts")).tuneConsoleProcess();
const { createElement } = await import("react");
const { render } = await import("ink");
const { openStore, Console, RENDER_OPTIONS, diffedScreen } = await load("console-parts", "bench/support/console-parts.ts");

const MARK = /mark (\d{13})-\d+/g;
const seen = new Set();
const latencies = [];
const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

/** Records, once per marker, how long after it was written it first reached the screen. */
function notice(text) {
  for (const [marker, at] of text.matchAll(MARK)) {
    if (seen.has(marker)) continue;
    seen.add(marker);
    latencies.push(Date.now() - Number(at));
  }
}

class Screen extends EventEmitter {
  columns = 160;
  rows = 40;
  isTTY = false;
  last = "";
  write = (frame) => {
    this.last = frame;
    notice(frame);
    return true;
  };
}

class Keys extends EventEmitter {
  isTTY = true;
  data = null;
  press(data) {
    this.data = data;
    this.emit("readable");
  }
  read = () => {
    const data = this.data;
    this.data = null;
    return data;
  };
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
}

async function until(test, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`bench console: no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function idleCpu(ms) {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return ((used.user + used.system) / 1000 / ms) * 100;
}

async function consoleSide(store, started) {
  const screen = new Screen();
  const keys = new Keys();
  const editor = { edit: () => ({ status: "unchanged" }) };
  render(createElement(Console, { store, actor: "bench", readOnly: false, storeLabel: url, editor, clipboard: () => undefined }), {
    // As runConsole draws: only the rows that changed.
    stdout: diffedScreen(screen).stream,
    stdin: keys,
    stderr: screen,
    exitOnCtrlC: false,
    patchConsole: false,
    ...RENDER_OPTIONS,
  });
  await until(() => screen.last.includes("by recent activity") && /run-\w+/.test(screen.last), "first frame with runs");
  const firstFrameMs = performance.now() - started;
  // To the target run's events, following, as an operator would: the palette, then tab 2.
  for (const key of [":", ..."run ", ...runId, "\r"]) {
    keys.press(key);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await until(() => screen.last.includes("1 Graph"), "run view");
  keys.press("2");
  await until(() => screen.last.includes("following"), "events tab");
  return {
    firstFrameMs,
    idle: async () => {
      keys.press("\u001b");
      await until(() => screen.last.includes("by recent activity"), "runs list again");
      await new Promise((resolve) => setTimeout(resolve, 500));
      return idleCpu(5_000);
    },
  };
}

async function baselineSide(store, started) {
  const { runs } = await store.listRuns({ limit: 500 });
  const firstFrameMs = performance.now() - started;
  if (runs.length === 0) throw new Error("no runs");
  const abort = new AbortController();
  void (async () => {
    for await (const event of store.subscribe({ signal: abort.signal })) notice(JSON.stringify(event.payload));
  })();
  return { firstFrameMs, idle: () => idleCpu(5_000) };
}

const started = performance.now();
const store = await openStore(url);
const side = mode === "baseline" ? await baselineSide(store, started) : await consoleSide(store, started);
const busyFrom = process.cpuUsage();
const busyAt = performance.now();
report({ phase: "ready", firstFrameMs: side.firstFrameMs });
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== "measure-idle") continue;
  const busy = process.cpuUsage(busyFrom);
  const busyPct = ((busy.user + busy.system) / 1000 / (performance.now() - busyAt)) * 100;
  const idlePct = await side.idle();
  report({ phase: "done", latencies, idlePct, busyPct, maxRssMb: process.resourceUsage().maxRSS / 1024 });
  break;
}
await store.close().catch(() => undefined);
process.exit(0);
