import type { Store, StoreRoom } from "../../engine/index.js";
import { bytes } from "./format.js";
import type { Output } from "./output.js";

/** The warning for a store that is full or nearly so; none while it has room. */
export function roomWarning(room: StoreRoom | undefined): string | undefined {
  if (!room || room.state === "ok") return undefined;
  const left = `${bytes(room.freeBytes)} left of ${bytes(room.totalBytes)} in ${room.where}`;
  return room.state === "full"
    ? `warning: the store is full (${left}): workers cannot commit until room is made`
    : `warning: the store is nearly full (${left}): at the limit, commits will be refused`;
}

/**
 * Warns on stderr when the store is full or nearly so: runs that stall with their lease run out
 * may be waiting for room. A store that cannot tell, or fails to, says nothing here.
 */
export async function noteRoom(store: Store, out: Output): Promise<void> {
  const warning = roomWarning(await store.room().catch(() => undefined));
  if (warning) out.note(warning);
}
