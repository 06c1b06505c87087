import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, readState, workflow, type State } from "../../engine/index.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const update = fc.record(
  {
    list: fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
    text: fc.string({ maxLength: 40 }),
    obj: fc.dictionary(fc.constantFrom("a", "b", "c", "d"), fc.integer()),
  },
  { requiredKeys: [] },
);

describe("SQLite store: state at every checkpoint", () => {
  it("reads back, at every checkpoint, the state the runtime had at that step (property)", async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(update, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 5 }), async (script, every) => {
        const seen: State[] = [];
        const scripted = workflow(`scripted-${++runs}`, {
          state: z.object({
            list: z.array(z.string()).default([]),
            text: z.string().default(""),
            obj: z.record(z.string(), z.number()).default({}),
            step: z.number().default(0),
          }),
          reducers: { list: "append", obj: "merge" },
          limits: { maxSteps: 100 },
        })
          .node(
            "work",
            (s) => {
              seen.push(structuredClone(s));
              return { ...script[s.step], step: s.step + 1 };
            },
            { route: (s) => (s.step >= script.length ? "done" : "again"), routes: { again: "work", done: "finish" } },
          )
          .node("finish", (s) => void seen.push(structuredClone(s)), { next: "END" })
          .compile();
        const store = await openStore(`sqlite:${join(dir, `state-${runs}.db`)}`);
        const engine = createEngine({ store, workflows: [scripted], worker: { snapshotPolicy: { every, minBytes: 64 } } });
        try {
          const run = await engine.start(scripted, {});
          expect((await run.wait({ until: "end" })).status).toBe("succeeded");
          // Checkpoint n holds the state after step n, which is what the node of step n + 1 saw.
          for (let n = 0; n < seen.length; n++) expect(await readState(store, run.id, n)).toEqual(seen[n]);
          const checkpoints = await store.listCheckpoints(run.id);
          expect(checkpoints.length).toBe(seen.length + 1);
          expect(checkpoints.some((c) => c.snapshot && c.n > 0) || script.length < every).toBe(true);
        } finally {
          await engine.close();
          await store.close();
        }
      }),
      { numRuns: 12 },
    );
  });
});
