import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Builds dist/ when stale, so the CLI tests' child processes start fast.
    globalSetup: ["test/support/build.ts"],
  },
});
