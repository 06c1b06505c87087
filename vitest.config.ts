import { defaultServerConditions } from "vite";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Test files that need modules of their own: they draw through Ink as a terminal shows it, frame
 * by frame, where an Ink another file loaded on a CI runner (CI=true) would draw nothing until exit.
 */
const OWN_MODULES = ["test/console/render-cost.test.tsx", "test/console/ink-caches.test.ts"];

export default defineConfig({
  // `import ... from "pitwall"` (the example workflows' actions modules) gets the sources under
  // test, by the package's "pitwall-source" export condition, not dist/, which may be stale.
  ssr: { resolve: { conditions: ["pitwall-source", ...defaultServerConditions] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at once: much of a file's time is spent waiting on the child processes and
    // servers it starts, so two overlap well even on two cores (vitest's default, one less than
    // the cores, runs one file at a time there). Tests wait for what they can observe rather than
    // for a fixed time, so that the other file's load does not make them fail.
    maxWorkers: 2,
    // Builds dist/ when stale, so the CLI tests' child processes start fast.
    globalSetup: ["test/support/build.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.{ts,tsx}"],
          exclude: [...configDefaults.exclude, ...OWN_MODULES],
          // The files of one worker share its modules: each file importing the engine, Ink and zod
          // afresh cost about 100 s of the suite's time on two cores. Tests leave no module state
          // behind them (fake timers are put back after each test; stores, workers and servers are closed).
          isolate: false,
        },
      },
      { extends: true, test: { name: "own modules", include: OWN_MODULES } },
    ],
  },
});
