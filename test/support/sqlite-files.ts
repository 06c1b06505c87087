import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { openStore } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";

/** A folder for a test file's stores, removed after it: `fresh()` names a new store file in it. */
export function storeFiles(prefix: string): { dir: string; fresh: (name?: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  return { dir, fresh: (name = "store") => join(dir, `${name}-${++files}.db`) };
}

/** A store file holding `runs` runs just created, each with 3,000 bytes of state. */
export async function storeWithRuns(file: string, runs = 3, workflowName = "wf"): Promise<void> {
  const store = await openStore(`sqlite:${file}`);
  for (let i = 0; i < runs; i++) {
    await store.createRun(newRun({ id: `run-${i}`, workflow: { name: workflowName, version: "v1" }, state: { text: "x".repeat(3000) }, actor: "test" }));
  }
  await store.close();
}
