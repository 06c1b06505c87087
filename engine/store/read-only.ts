import { StoreError } from "../errors.js";
import { STORE_WRITES, type Store } from "./store.js";

const WRITES = new Set<PropertyKey>(STORE_WRITES);

/**
 * `store` with every write refused (`openStore(url, { readOnly: true })`): commands that only
 * read cannot change a store by mistake, and a console can show a store it may not write to.
 */
export function readOnlyStore<S extends Store>(store: S): S {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (WRITES.has(key)) return () => Promise.reject(new StoreError(`store ${target.description} is open read-only: nothing can be written to it`));
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}
