import { appendFileSync } from "node:fs";
import { z } from "zod";
import { workflow } from "../../engine/index.js";

/**
 * One node that takes 1.5 s and appends "start" to the file PITWALL_TEST_STARTS names each time
 * it starts (in whichever process runs it): how many times it ran, across workers.
 */
export const slow = workflow("slow-node", { state: z.object({ done: z.boolean().default(false) }) })
  .node("work", async () => {
    if (process.env.PITWALL_TEST_STARTS) appendFileSync(process.env.PITWALL_TEST_STARTS, "start\n");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return { done: true };
  })
  .compile();

export default slow;
