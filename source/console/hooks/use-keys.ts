import { createContext, useContext, useLayoutEffect, useRef, useSyncExternalStore } from "react";
import type { KeyLayer, KeyRouter } from "../key-router.js";
import type { Binding, Handlers } from "../keymap.js";

export const KeyRouterContext = createContext<KeyRouter | null>(null);

let nextLayerId = 1;

export function useRouter(): KeyRouter {
  const router = useContext(KeyRouterContext);
  if (!router) throw new Error("useKeys outside the console");
  return router;
}

/**
 * Registers what this component does with keys. Handlers are read at the time of the key
 * press, so they may close over the latest state; a falsy handler means "not applicable now".
 */
export function useKeys(priority: number, handlers: Handlers, options: Pick<KeyLayer, "modal" | "text"> = {}): void {
  const router = useRouter();
  const id = useRef(0);
  if (id.current === 0) id.current = nextLayerId++;
  const latest = useRef({ handlers, options });
  latest.current = { handlers, options };
  // Layout effects run in the same commit as the render: a key pressed right after a view
  // closes can never reach that view's handlers.
  useLayoutEffect(() => {
    const proxy: KeyLayer = {
      priority,
      get handlers() {
        return latest.current.handlers;
      },
      get modal() {
        return latest.current.options.modal;
      },
      get text() {
        return latest.current.options.text;
      },
    };
    router.set(id.current, proxy);
    return () => router.remove(id.current);
  }, [router, priority]);
  // After every render the set of applicable actions may have changed (the footer shows it).
  useLayoutEffect(() => router.refresh());
}

/** The bindings handled on screen now; re-renders when that set changes. */
export function useAvailableKeys(): Binding[] {
  const router = useRouter();
  useSyncExternalStore(router.subscribe, router.snapshot);
  return router.available();
}
