import { useRef } from "react";
import type { Handlers } from "../keymap.js";

/** The first visible row of a list of `count` rows shown `height` at a time, moving as little as possible. */
export function windowStart(count: number, selected: number, height: number, previous: number): number {
  if (count <= height) return 0;
  let start = Math.min(previous, selected);
  if (selected >= start + height) start = selected - height + 1;
  return Math.max(0, Math.min(start, count - height));
}

/** Keeps a scrolling window over a list so that the selected row stays visible. */
export function useWindow(count: number, selected: number, height: number): number {
  const start = useRef(0);
  start.current = windowStart(count, selected, Math.max(1, height), start.current);
  return start.current;
}

/**
 * The movement keys of a list whose selection is `index` of `count`. Keys that arrive together
 * (`jjj` in one chunk) reach these handlers before the list draws again: each moves on from where
 * the one before it left the selection.
 */
export function listHandlers(count: number, index: number, page: number, select: (index: number) => void): Handlers {
  if (count === 0) return {};
  let at = index;
  const go = (i: number) => {
    at = Math.max(0, Math.min(count - 1, i));
    select(at);
  };
  return {
    down: () => go(at + 1),
    up: () => go(at - 1),
    pageDown: () => go(at + Math.max(1, page - 1)),
    pageUp: () => go(at - Math.max(1, page - 1)),
    top: () => go(0),
    bottom: () => go(count - 1),
  };
}
