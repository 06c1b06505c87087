// A `kill` whose process reads its run as held by a worker, and records the kill for that worker
// only once the run has ended (the moment between the two, stretched), then stops there, for a
// test to SIGKILL it: the kill is left queued for a worker that has let go of the run.
//   node stalled-kill.js <store url> <run id>
// It prints {"read": "held"} once it has read the run as held (the test may let the run end
// then), {"commandId": ...} once the kill is recorded, and waits, with a timer that keeps the
// process alive, until it is killed.
import { Operator, TERMINAL_RUN_STATUSES, openStore, type Store } from "../../../engine/index.js";

const [url, runId] = process.argv.slice(2);
if (!url || !runId) {
  console.error("usage: stalled-kill.ts <store url> <run id>");
  process.exit(2);
}

const store = await openStore(url);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(10);
}

await until(async () => Boolean((await store.getRun(runId))?.owner));
const stalled = new Proxy(store, {
  get(target, key) {
    if (key === "getRun") {
      return async (id: string) => {
        const run = await target.getRun(id);
        if (run?.owner) console.log(JSON.stringify({ read: "held" }));
        return run;
      };
    }
    if (key === "submitCommand") {
      return async (...args: Parameters<Store["submitCommand"]>) => {
        await until(async () => TERMINAL_RUN_STATUSES.includes((await target.getRun(runId))!.status));
        await target.submitCommand(...args);
        setInterval(() => undefined, 60_000);
        console.log(JSON.stringify({ commandId: args[0].id }));
        return new Promise(() => undefined);
      };
    }
    const value = Reflect.get(target, key, target) as unknown;
    return typeof value === "function" ? value.bind(target) : value;
  },
});
await new Operator(stalled, { actor: "operator:carol" }).kill(runId, { reason: "too slow" });
console.error("the kill returned: it was not recorded for a worker");
process.exit(1);
