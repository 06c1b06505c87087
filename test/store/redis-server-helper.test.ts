import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { spawnScript } from "../support/processes.js";
import { SETPRIV, accepts } from "../support/redis-server.js";


describe("the tests' redis-server", () => {
  // A test run killed (SIGTERM, SIGINT) runs no afterAll: its servers must not outlive it.
  it.runIf(SETPRIV)("dies with the process that started it, killed with SIGKILL", async () => {
    const holder = spawnScript("redis-holder", []);
    const { port, dir } = (await holder.line((l) => typeof l.port === "number")) as { port: number; dir: string };
    try {
      expect(await accepts(port)).toBe(true);
      holder.process.kill("SIGKILL");
      await holder.exited;
      const deadline = Date.now() + 5_000;
      while ((await accepts(port)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await accepts(port)).toBe(false);
    } finally {
      holder.process.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
