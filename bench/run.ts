// `npm run bench [workload...]`: runs every workload in bench/workloads/ (or the ones named), one
// after the other. A workload is a module whose default export is an async function that prints
// its figures; its `description` export is printed above them.
import { readdirSync } from "node:fs";
import { machine } from "./support/harness.js";

const dir = new URL("./workloads/", import.meta.url);
const available = readdirSync(dir)
  .filter((f) => /\.[cm]?[jt]s$/.test(f))
  .map((f) => ({ name: f.replace(/\.[cm]?[jt]s$/, ""), file: f }))
  .sort((a, b) => a.name.localeCompare(b.name));
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.some((a) => a.name === w));
if (unknown.length > 0) {
  console.error(`unknown workload ${unknown.join(", ")}: choose from ${available.map((a) => a.name).join(", ")}`);
  process.exit(2);
}

const m = machine();
console.log(`machine: ${m.cpus} CPUs (${m.model}), node ${m.node}, ${m.platform}`);
for (const { name, file } of available.filter((a) => wanted.length === 0 || wanted.includes(a.name))) {
  const workload = (await import(new URL(file, dir).href)) as { default: () => Promise<void>; description?: string };
  console.log(`\n## ${name}${workload.description ? ` — ${workload.description}` : ""}`);
  await workload.default();
}
