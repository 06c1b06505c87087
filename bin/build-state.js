// Whether dist/ (the output of `npm run build`) is newer than every file it is built from.
// Shared by the bin, which prefers a fresh build, and the test setup, which makes one.
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const builtCli = join(root, "dist", "source", "cli.js");
const sourceCli = join(root, "source", "cli.tsx");

/** Whether the TypeScript sources are here: a clone of the repository, not an installed package (which ships dist/ only). */
export function hasSources() {
  return existsSync(sourceCli);
}

function newestSource() {
  let newest = Math.max(statSync(join(root, "package.json")).mtimeMs, statSync(join(root, "tsconfig.json")).mtimeMs);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  walk(join(root, "engine"));
  walk(join(root, "source"));
  return newest;
}

/** Whether dist/ is there and, where the sources are too, newer than every one of them. */
export function buildIsFresh() {
  if (!existsSync(builtCli)) return false;
  if (!hasSources()) return true;
  try {
    return statSync(builtCli).mtimeMs >= newestSource();
  } catch {
    return false;
  }
}
