// Opens a store and uses it once, in a process of its own (so a test can run it as another user):
//   node open-store.js <store url> [read-only]
// Prints {"ok":true,"runs":<runs listed>} or {"error":<message>,"name":<error class>}.
import { openStore } from "../../../engine/index.js";

try {
  const store = await openStore(process.argv[2]!, { readOnly: process.argv[3] === "read-only" });
  const { runs } = await store.listRuns();
  await store.close();
  console.log(JSON.stringify({ ok: true, runs: runs.length }));
} catch (error) {
  console.log(JSON.stringify({ error: (error as Error).message, name: (error as Error).name }));
}
