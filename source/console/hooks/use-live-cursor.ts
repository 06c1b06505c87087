import { useRef } from "react";
import { windowStart } from "./use-list.js";

export interface LiveCursor {
  /** The cursor's row (0 when the list is empty). */
  index: number;
  /** The first row shown. */
  start: number;
  /** What the selection is now: undefined while the cursor is on the first row. */
  selection: string | undefined;
}

/**
 * The cursor of a list whose rows move by themselves (runs reordered by activity), k9s's way:
 *
 * - on the first row (at the start, after `g`, a new sort or filter, or moved there) the cursor
 *   stays on the first row, whatever row comes there; `selected` is then undefined;
 * - anywhere else it stays on its row's item while that item is on screen, and the list does not
 *   scroll by itself; an item that leaves the screen or the list leaves the cursor on its place on
 *   the screen, on the item now there;
 * - a key that moves the cursor (`selected` changed) scrolls the list as little as it takes.
 *
 * `ids` are the rows' items in order; `selected` the item chosen (undefined: the first row).
 * The caller keeps `selection` as its `selected` (it differs when an item left the screen).
 */
export function useLiveCursor(ids: readonly string[], selected: string | undefined, height: number): LiveCursor {
  const last = useRef<{ id: string | undefined; start: number; row: number }>({ id: undefined, start: 0, row: 0 });
  const count = ids.length;
  const shown = Math.max(1, height);
  const start0 = Math.min(last.current.start, Math.max(0, count - shown));
  let index = 0;
  let start = 0;
  if (selected !== undefined && count > 0) {
    const found = ids.indexOf(selected);
    if (selected !== last.current.id && found >= 0) {
      index = found;
      start = windowStart(count, index, shown, start0);
    } else if (found >= start0 && found < start0 + shown) {
      index = found;
      start = start0;
    } else {
      start = start0;
      index = Math.min(count - 1, start + last.current.row);
    }
  }
  last.current = { id: ids[index], start, row: index - start };
  return { index, start, selection: index === 0 ? undefined : ids[index] };
}
