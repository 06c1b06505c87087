import { readFileSync } from "node:fs";
const p = JSON.parse(readFileSync(process.argv[2], "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
const dt = p.timeDeltas; let total = 0;
const counts = new Map();
for (let i = 0; i < p.samples.length; i++) { counts.set(p.samples[i], (counts.get(p.samples[i]) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; }
const key = (n) => `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber}`;
const incl = new Map();
for (const [id, t] of counts) {
  const n = byId.get(id); self.set(key(n), (self.get(key(n)) ?? 0) + t);
  const seen = new Set(); let cur = id;
  while (cur !== undefined) { const k = key(byId.get(cur)); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + t); } cur = parent.get(cur); }
}
const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, t]) => `${(100 * t / total).toFixed(1).padStart(5)}% ${k}`).join("\n");
console.log("total ms", (total / 1000).toFixed(0));
console.log("SELF\n" + top(self, Number(process.argv[3] ?? 40)));
console.log("INCL\n" + top(incl, Number(process.argv[4] ?? 60)));
