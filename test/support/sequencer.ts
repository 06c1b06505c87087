import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Files that spend longest waiting on child processes and servers: the longer, the earlier. */
function weight(file: string): number {
  if (/sqlite-crash|worker-fleet|redis-fleet/.test(file)) return 0;
  if (file.startsWith("test/e2e/")) return 1;
  if (file.startsWith("test/store/")) return 2;
  return 3;
}

/**
 * Starts the long, process-heavy files first, as vitest does once it has timed a run. On a fresh
 * clone (CI) it has no timings and orders files by size, so a long file with few lines (the crash
 * test kills and restarts a child 50 times) started last and ran alone while the other worker
 * idled. Within a weight, vitest's own order (its timings, else size) stands.
 */
export default class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = new Map(sorted.map((spec, i) => [spec, i]));
    return [...sorted].sort((a, b) => weight(relative(root, a.moduleId)) - weight(relative(root, b.moduleId)) || rank.get(a)! - rank.get(b)!);
  }
}
