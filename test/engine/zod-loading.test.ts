import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadZod } from "../../engine/zod.js";

describe("loading zod at its first use", () => {
  it("takes the first that loads: the build's own file, else the zod package (a service that bundled pitwall into its own files)", () => {
    const { z } = loadZod(["./no-such-zod-file.cjs", "zod"], import.meta.url);
    expect(z.object({ n: z.number() }).parse({ n: 1 })).toEqual({ n: 1 });
  });

  it("looks from the working folder when the module has no URL (a service bundled as CommonJS)", () => {
    expect(typeof loadZod(["zod"], undefined).z.string).toBe("function");
  });

  it("says in one line what it tried, from where, and what to do, when none loads", () => {
    expect(() => loadZod(["./no-such-zod-file.cjs", "no-such-zod-package"], import.meta.url)).toThrow(
      new Error(`cannot load zod (./no-such-zod-file.cjs, nor no-such-zod-package, from ${dirname(fileURLToPath(import.meta.url))}): this install of pitwall is incomplete; reinstall it, or run \`npm run build\` in a clone`),
    );
  });
});
