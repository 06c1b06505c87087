import { execFileSync } from "node:child_process";
import { join } from "node:path";
// @ts-expect-error The bin's helper is plain JavaScript without types.
import { buildIsFresh, root } from "../../bin/build-state.js";

/** The root of the repository (where the bin runs from). */
export const ROOT = root as string;

/** Child processes run the compiled CLI and console, as an installed `pitwall` does: build them if needed. */
export function ensureBuild(): void {
  if (buildIsFresh()) return;
  console.log("building dist/ (npm run build) for the child processes…");
  execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
}
