#!/usr/bin/env node
// The `pitwall` command. It runs the compiled build in dist/ when one exists and is newer than
// every source file (`npm run build`; it starts about three times faster), else the TypeScript
// sources through tsx (bin/from-sources.js). Either way actions modules written in TypeScript
// load (see source/cli/typescript.ts).
import { pathToFileURL } from "node:url";
import { buildIsFresh, builtCli } from "./build-state.js";

if (buildIsFresh()) await import(pathToFileURL(builtCli).href);
else await import("./from-sources.js");
