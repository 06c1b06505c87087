// Claims one run once, when told to, in a process of its own:
//   node claim-once.js <store file> <run id>
// Prints {"ready":true}, waits for SIGUSR1, then prints {"fence":<n>,"recovered":<bool>} or {"fence":null}.
import { openStore } from "../../../engine/index.js";

const [file, runId] = process.argv.slice(2);
const store = await openStore(`sqlite:${file!}`);
const alive = setInterval(() => {}, 1000); // a signal listener alone does not keep Node running
const go = new Promise((resolve) => process.once("SIGUSR1", resolve));
console.log(JSON.stringify({ ready: true }));
await go;
clearInterval(alive);
const claim = await store.claimRun({ owner: `claimer-${process.pid}`, leaseMs: 60_000, runId: runId! });
console.log(JSON.stringify(claim ? { fence: claim.fence, recovered: claim.recovered } : { fence: null }));
await store.close();
