#!/usr/bin/env node
// The `pitwall` command. It runs the compiled build in dist/ when one exists and is newer than
// every source file (`npm run build`; it starts about three times faster), else the TypeScript
// sources through tsx. Either way actions modules written in TypeScript load (see
// source/cli/typescript.ts).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildIsFresh, builtCli, root } from "./build-state.js";

if (buildIsFresh()) {
  await import(pathToFileURL(builtCli).href);
} else {
  const { register } = await import("tsx/esm/api");
  register({ tsconfig: join(root, "tsconfig.json") });
  globalThis[Symbol.for("pitwall.typescript")] = true;
  await import(pathToFileURL(join(root, "source", "cli.tsx")).href);
}
