import { chainWorkflow } from "./workflows.js";

/** The `redis` workload's chain (10 nodes waiting 20 ms), as a module worker processes load. */
export const CHAIN_NODES = 10;
export const NODE_MS = 20;

export default chainWorkflow(CHAIN_NODES, NODE_MS);
