/**
 * The engine the benchmarks measure: the compiled build an installed pitwall runs (dist/, built
 * first when older than the sources), not the TypeScript sources through tsx, whose compiler
 * wraps every named function it makes (esbuild's keepNames) and made `chain` some 5% slower than
 * the build. Loaded once the build is fresh, hence the dynamic import.
 */
import { ensureBuild } from "./build.js";

await ensureBuild();
const engine = (await import("pitwall")) as typeof import("pitwall");

export const { MemoryStore, Operator, STORE_WRITES, Worker, WorkflowRegistry, actionRegistry, createEngine, openStore, readState, storeWorkflow, workflow } = engine;
export type { CompiledWorkflow, NewEvent, RunStatus, Store } from "pitwall";
