import { runOnSqlite } from "../support/sqlite.js";
import { chainWorkflow } from "../support/workflows.js";
import { scratchDir } from "../support/harness.js";
const wf = chainWorkflow(10);
const s = scratchDir();
await runOnSqlite(s.file("warm.db"), wf, 200, "process");
let best = Infinity;
for (let i = 0; i < 8; i++) { const m = await runOnSqlite(s.file(`r${i}.db`), wf, 200, "process"); best = Math.min(best, m.wallMs ?? m.ms ?? 0); console.log(JSON.stringify(m).slice(0,120)); }
s.cleanup();
