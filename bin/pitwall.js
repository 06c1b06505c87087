#!/usr/bin/env node
// The `pitwall` command. It runs the compiled build in dist/ when one exists and is newer than
// every source file (`npm run build`, bin/build.js; it starts about three times faster), else the TypeScript
// sources through tsx (bin/from-sources.js). An installed package ships dist/ without the sources:
// its build is used as it is. Either way actions modules written in TypeScript load (see
// source/cli/typescript.ts).
import { pathToFileURL } from "node:url";
import { buildIsFresh, builtCli, hasSources, root } from "./build-state.js";

if (buildIsFresh()) await import(pathToFileURL(builtCli).href);
else if (hasSources()) await import("./from-sources.js");
else {
  process.stderr.write(`pitwall: ${root} holds neither a build (dist/source/cli.js) nor the sources: reinstall the package, or run \`npm run build\` in a clone\n`);
  process.exitCode = 1;
}
