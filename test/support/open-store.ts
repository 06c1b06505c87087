// Opens a store and uses it once, in a process of its own (so a test can run it as another user):
//   node --import tsx test/support/open-store.ts <store url>
// Prints {"ok":true} or {"error":<message>,"name":<error class>}.
import { openStore } from "../../engine/index.js";

try {
  const store = await openStore(process.argv[2]!);
  await store.listRuns();
  await store.close();
  console.log(JSON.stringify({ ok: true }));
} catch (error) {
  console.log(JSON.stringify({ error: (error as Error).message, name: (error as Error).name }));
}
