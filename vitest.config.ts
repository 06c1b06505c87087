import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // `import ... from "pitwall"` (the example workflows' actions modules) gets the sources under
  // test, by the package's "pitwall-source" export condition, not dist/, which may be stale.
  ssr: { resolve: { conditions: ["pitwall-source", ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Builds dist/ when stale, so the CLI tests' child processes start fast.
    globalSetup: ["test/support/build.ts"],
  },
});
