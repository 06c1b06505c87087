// `node store-probe.js <store-url>`: opens the store, creates a run and reads its
// first event back, then prints `ok`; on failure prints the error's message and exits with 1.
import { errorMessage, openStore } from "../../../engine/index.js";
import { newId } from "../../../engine/ids.js";
import { newRun } from "../../../engine/runtime/new-run.js";

const url = process.argv[2] ?? "";
try {
  const store = await openStore(url);
  const id = newId("run");
  await store.createRun(newRun({ id, workflow: { name: "probe", version: "v-probe" }, state: {}, actor: "probe" }));
  const [event] = await store.readEvents({ runId: id });
  await store.close();
  console.log(event?.type === "run.created" ? "ok" : "no event");
} catch (error) {
  console.error(errorMessage(error));
  process.exit(1);
}
