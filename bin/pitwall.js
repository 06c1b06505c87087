#!/usr/bin/env node
// The `pitwall` command. tsx is registered first so that the TypeScript sources, and actions
// modules written in TypeScript, load without a build step.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
register({ tsconfig: join(root, "tsconfig.json") });
await import(join(root, "source", "cli.tsx"));
