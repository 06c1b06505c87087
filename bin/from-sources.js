#!/usr/bin/env node
// `pitwall` from the TypeScript sources through tsx, whether or not a build exists: what the bin
// runs when dist/ is missing or stale, and a way to try a change without building.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { root } from "./build-state.js";

const { register } = await import("tsx/esm/api");
register({ tsconfig: join(root, "tsconfig.json") });
globalThis[Symbol.for("pitwall.typescript")] = true;
await import(pathToFileURL(join(root, "source", "cli.tsx")).href);
