import { NotFoundError, type InterruptRecord, type RunRecord, type Store } from "../../engine/index.js";

export async function mustGetRun(store: Store, id: string): Promise<RunRecord> {
  const run = await store.getRun(id);
  if (!run) throw new NotFoundError("run", id);
  return run;
}

export async function mustGetInterrupt(store: Store, id: string): Promise<InterruptRecord> {
  const interrupt = await store.getInterrupt(id);
  if (!interrupt) throw new NotFoundError("interrupt", id);
  return interrupt;
}
