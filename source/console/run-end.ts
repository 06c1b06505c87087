import { TERMINAL_RUN_STATUSES, type EventPayloads, type EventRecord, type RunRecord, type Store } from "../../engine/index.js";
import { clean, clock } from "./text.js";

export const hasEnded = (run: RunRecord) => TERMINAL_RUN_STATUSES.includes(run.status);

/** How an ended run ended, in words from its events: who canceled it and when, or when it succeeded or failed. */
export async function howRunEnded(store: Store, run: RunRecord): Promise<string> {
  const [event] = await store.readEvents({ runId: run.id, types: ["run.canceled", "run.succeeded", "run.failed"], last: 1 });
  const at = clock(event?.time ?? run.endedAt ?? run.updatedAt);
  if (event?.type === "run.canceled") {
    const { reason } = (event as EventRecord<"run.canceled">).payload as EventPayloads["run.canceled"];
    return `canceled by ${clean(event.actor)} at ${at}${reason ? ` (${clean(reason)})` : ""}`;
  }
  if (event?.type === "run.failed") return `failed at ${at}: ${clean((event as EventRecord<"run.failed">).payload.error.message)}`;
  return `${run.status} at ${at}`;
}
