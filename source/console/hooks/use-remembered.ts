import { createContext, useContext, useState, type Dispatch, type SetStateAction } from "react";

/**
 * What a view remembers while other views are stacked on it (its filter, selection, tab), so
 * that `esc` returns to it as it was left. Views deeper than the one pushed are forgotten.
 */
export interface ViewMemory {
  store: Map<string, unknown>;
  depth: number;
}

export const ViewMemoryContext = createContext<ViewMemory>({ store: new Map(), depth: 0 });

export function memoryFor(store: Map<string, unknown>, depth: number): ViewMemory {
  return { store, depth };
}

export function forgetFrom(store: Map<string, unknown>, depth: number): void {
  for (const key of store.keys()) if (Number(key.slice(0, key.indexOf(":"))) >= depth) store.delete(key);
}

/** `useState`, kept for this view's place in the stack. */
export function useRemembered<T>(name: string, initial: T | (() => T)): [T, Dispatch<SetStateAction<T>>] {
  const { store, depth } = useContext(ViewMemoryContext);
  const key = `${depth}:${name}`;
  const [value, setValue] = useState<T>(() => (store.has(key) ? (store.get(key) as T) : typeof initial === "function" ? (initial as () => T)() : initial));
  const set: Dispatch<SetStateAction<T>> = (next) =>
    setValue((current) => {
      const value = typeof next === "function" ? (next as (c: T) => T)(current) : next;
      store.set(key, value);
      return value;
    });
  return [value, set];
}
