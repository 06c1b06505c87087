import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach } from "vitest";
import { openStore, type Store } from "../../engine/index.js";
import { fixtureOn, type Fixture } from "./fixtures.js";
import { closeAll, type ConsoleHarness } from "./harness.js";

export interface SqliteFixtures {
  /** A folder for this file's stores and scripts, removed after its tests. */
  dir: string;
  /** A new SQLite store with the fixture workflows' worker; `url` is what another process opens it by. */
  open(): Promise<{ fx: Fixture<Store>; url: string }>;
  /** The console a test opened, unmounted after it. */
  console(ui: ConsoleHarness): ConsoleHarness;
}

/** Fixtures on SQLite files that other processes (the CLI) can open too; each test's console and engine are closed after it. */
export function sqliteFixtures(name: string): SqliteFixtures {
  const dir = mkdtempSync(join(tmpdir(), `pitwall-console-${name}-`));
  let stores = 0;
  let fx: Fixture<Store> | undefined;
  let ui: ConsoleHarness | undefined;
  afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    async open() {
      const url = `sqlite:${join(dir, `store-${++stores}.db`)}`;
      fx = fixtureOn(await openStore(url));
      return { fx, url };
    },
    console: (opened) => (ui = opened),
  };
}
