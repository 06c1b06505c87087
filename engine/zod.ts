import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as ZodPackage from "zod";

/** zod's `z`, as `import { z } from "zod"` gives it. */
export type Zod = typeof ZodPackage.z;

/**
 * Where the build put its one-file copy of zod (bin/build.js defines it; undefined when the
 * sources run, which load zod from node_modules).
 */
declare const PITWALL_BUNDLED_ZOD: string | undefined;

let loaded: Zod | undefined;

/**
 * zod, loaded at its first use. Loading it (about 60 ms of a command's start, a quarter) and
 * building the schemas of workflow files is work that the commands reading a store — `runs`,
 * `show`, `events`, the console — never need, so nothing builds a schema when its module loads
 * and zod is required only here, when one is first built. zod 4 is made to be loaded more than
 * once (its settings and registries live on globalThis, `instanceof` asks a schema's traits), so
 * a user's schemas, made with the zod of their project, work with this copy as with their own.
 */
export function zod(): Zod {
  loaded ??= loadZod(typeof PITWALL_BUNDLED_ZOD === "string" ? [PITWALL_BUNDLED_ZOD, "zod"] : ["zod"], import.meta.url).z;
  return loaded;
}

/**
 * The first of `candidates` that `from` (a module's URL) can require: the build's own file, then
 * the zod package pitwall depends on — what a service that bundles pitwall into its own files
 * (where the build's file is not beside it) still has in node_modules. Missing, it is found only
 * in the middle of a command: the error says what is broken, not where it broke.
 */
export function loadZod(candidates: readonly string[], from: string | undefined): typeof ZodPackage {
  // A service bundled as CommonJS has no import.meta.url: its node_modules are then the working folder's.
  const base = from ?? pathToFileURL(join(process.cwd(), "index.js")).href;
  const require = createRequire(base);
  for (const candidate of candidates) {
    try {
      return require(candidate) as typeof ZodPackage;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
    }
  }
  throw new Error(`cannot load zod (${candidates.join(", nor ")}, from ${dirname(fileURLToPath(base))}): this install of pitwall is incomplete; reinstall it, or run \`npm run build\` in a clone`);
}

/**
 * A zod schema (this copy's or a user's) as JSON Schema, without the `$schema` line naming its
 * dialect: what is stored, hashed or shown is the schema itself.
 */
export function jsonSchemaOf(schema: ZodPackage.z.ZodType, options?: Parameters<Zod["toJSONSchema"]>[1]): Record<string, unknown> {
  const { $schema: _dialect, ...json } = zod().toJSONSchema(schema, options) as Record<string, unknown>;
  return json;
}

/** `build()` made at the first call and kept: for schemas, which modules must not build as they load. */
export function lazily<T>(build: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: build() }).value;
}
