// A process that forks a run and stops at the point where it would make the fork's run, its fork
// command recorded and not answered, for a test to SIGKILL it there:
//   node stalled-fork.js <store url> <run id> <checkpoint>
// Its store's createRun never returns: it prints {"creating": <fork run id>, "commandId": ...} and
// waits, with a timer that keeps the process alive, until it is killed.
import { Operator, openStore, type Store } from "../../../engine/index.js";

const [url, runId, checkpoint] = process.argv.slice(2);
if (!url || !runId || checkpoint === undefined) {
  console.error("usage: stalled-fork.ts <store url> <run id> <checkpoint>");
  process.exit(2);
}

const store = await openStore(url);
const stalled = new Proxy(store, {
  get(target, key) {
    if (key === "createRun") {
      return (init: Parameters<Store["createRun"]>[0]) => {
        setInterval(() => undefined, 60_000);
        console.log(JSON.stringify({ creating: init.run.id, commandId: init.answering?.answer.id }));
        return new Promise(() => undefined);
      };
    }
    const value = Reflect.get(target, key, target) as unknown;
    return typeof value === "function" ? value.bind(target) : value;
  },
});
await new Operator(stalled, { actor: "operator:carol" }).fork(runId, /^\d+$/.test(checkpoint) ? Number(checkpoint) : checkpoint, { reason: "try the other way" });
console.error("the fork returned: its store's createRun was not stalled");
process.exit(1);
