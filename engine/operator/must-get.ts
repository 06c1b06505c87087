import { NotFoundError } from "../errors.js";
import type { RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";

/** A run an operator acts on or waits for; NotFoundError when the store has none of that id. */
export async function mustGetRun(store: Store, id: string): Promise<RunRecord> {
  return (await store.getRun(id)) ?? notFound("run", id);
}

export function notFound(what: string, id: string): never {
  throw new NotFoundError(what, id);
}
