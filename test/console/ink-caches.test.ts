import { EventEmitter } from "node:events";
import { createElement } from "react";
import { Box, Text, render } from "ink";
import { expect, it } from "vitest";
import { boundInkCaches } from "../../source/console/ink-caches.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("keeps Ink's caches of measured texts bounded while a screen draws ever new texts (a console left open for days)", async () => {
  const caches = await boundInkCaches(500, 20);
  const terminal = Object.assign(new EventEmitter(), { columns: 80, rows: 30, isTTY: true, write: () => true });
  const screen = (n: number) =>
    createElement(Box, { flexDirection: "column", width: 60 }, ...Array.from({ length: 10 }, (_, i) => createElement(Text, { key: i }, `row ${i}: ${n} s ago`)));
  const instance = render(screen(0), { stdout: terminal as never, patchConsole: false, exitOnCtrlC: false });
  try {
    expect(caches.sizes().measured).toBeGreaterThan(0);
    expect(caches.sizes().wrapped).toBeDefined();
    let largest = 0;
    for (let n = 1; n <= 300; n++) {
      instance.rerender(screen(n));
      await sleep(1);
      largest = Math.max(largest, caches.sizes().measured!);
    }
    // 3,000 texts were measured; the cache was emptied whenever it had grown past 500 since the last look.
    expect(largest).toBeLessThan(1_500);
  } finally {
    instance.unmount();
    caches.stop();
  }
});
