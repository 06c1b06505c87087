import { cpus } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What the figures were measured on. */
export function machine(): { cpus: number; model: string; node: string; platform: string } {
  const list = cpus();
  return { cpus: list.length, model: list[0]?.model.trim() ?? "unknown", node: process.version, platform: `${process.platform}-${process.arch}` };
}

/** A fresh folder for one measurement's files, removed by `cleanup`. */
export function scratchDir(): { dir: string; file(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "pitwall-bench-"));
  return { dir, file: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Wall-clock time, and the CPU time of this process (user + system) over the same span. */
export interface Timing {
  ms: number;
  cpuMs: number;
}

export function stopwatch(): () => Timing {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
  };
}

/**
 * Microseconds per unit as "wall (cpu)". On a busy machine the CPU figure is the steadier one;
 * waiting for the disk shows only in the wall figure.
 */
export function perUnit(t: Timing, units: number): string {
  return `${fmt((t.ms / units) * 1000)} (${fmt((t.cpuMs / units) * 1000)})`;
}

/** `a / b` as "wall× (cpu×)". */
export function ratios(a: Timing, b: Timing): string {
  return `${ratio(a.ms, b.ms)} (${ratio(a.cpuMs, b.cpuMs)})`;
}

/**
 * Runs a measurement `times` times and keeps the fastest: on a shared machine the other runs
 * measure the neighbours too.
 */
export async function fastest<T extends { ms: number }>(times: number, measure: () => Promise<T> | T): Promise<T> {
  let best: T | undefined;
  for (let i = 0; i < times; i++) {
    const result = await measure();
    if (!best || result.ms < best.ms) best = result;
  }
  return best!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Prints rows as an aligned plain-text table. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const cells = [header, ...rows].map((r) => r.map((c) => (typeof c === "number" ? fmt(c) : c)));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  for (const r of cells) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "));
}

/** Numbers with about three significant digits. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  return abs >= 100 ? Math.round(n).toLocaleString("en-US") : abs >= 10 ? n.toFixed(1) : n.toFixed(2);
}

export function ratio(value: number, baseline: number): string {
  return `${fmt(value / baseline)}×`;
}
