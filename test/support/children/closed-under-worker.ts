// Closes a store under its running worker, in a process of its own (a worker spinning on the
// ended subscription would starve this process's timers, where a test could not time it out):
//   node closed-under-worker.js <store file>
// Prints {"errors":[...]} (what the worker reported) once a timer fires after the close.
import { z } from "zod";
import { createEngine, openStore, workflow } from "../../../engine/index.js";

const store = await openStore(`sqlite:${process.argv[2]!}`);
const wf = workflow("one", { state: z.object({ n: z.number().default(0) }) }).node("a", () => ({ n: 1 })).compile();
const errors: string[] = [];
const engine = createEngine({ store, workflows: [wf], worker: { onError: (message) => errors.push(message) } });
// The worker follows the run's events, so it resumes its subscription after the last one seen.
const run = await (await engine.start(wf, {})).wait({ timeoutMs: 10_000 });
if (run.status !== "succeeded") throw new Error(`run ended ${run.status}`);
await store.close();
await new Promise((resolve) => setTimeout(resolve, 200));
console.log(JSON.stringify({ errors }));
await engine.worker!.stop();
