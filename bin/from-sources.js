#!/usr/bin/env node
// `pitwall` from the TypeScript sources through tsx, whether or not a build exists: what the bin
// runs when dist/ is missing or stale, and a way to try a change without building.
import { register } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { root } from "./build-state.js";

// `import ... from "pitwall"` (the example workflows' actions modules) gets these sources too, by
// the package's "pitwall-source" export condition, not a build that may be stale or missing.
const SOURCE_CONDITION = `export function resolve(specifier, context, next) {
  return next(specifier, { ...context, conditions: ["pitwall-source", ...context.conditions] });
}`;
register(`data:text/javascript,${encodeURIComponent(SOURCE_CONDITION)}`);
const { register: registerTsx } = await import("tsx/esm/api");
registerTsx({ tsconfig: join(root, "tsconfig.json") });
globalThis[Symbol.for("pitwall.typescript")] = true;
await import(pathToFileURL(join(root, "source", "cli.tsx")).href);
