import type { LiveFeed } from "../live.js";

/**
 * A read of the store for a view, run one at a time: asked for while it runs, it runs once more
 * when done — never two at once, no request lost. `read` returns false to stop there (what it
 * reads is gone). Errors go to `onError` while the view is `alive`.
 */
export function serialLoad(read: () => Promise<boolean | void>, onError: (error: unknown) => void, alive: () => boolean): () => void {
  let busy = false;
  let again = false;
  const load = async () => {
    if (busy) return void (again = true);
    busy = true;
    try {
      do {
        again = false;
        if ((await read()) === false) return;
      } while (again && alive());
    } catch (error) {
      if (alive()) onError(error);
    } finally {
      busy = false;
    }
  };
  return () => void load();
}

/**
 * Runs `read` now and again whenever the live feed reports a change to the run, one at a time
 * (see `serialLoad`); returns what stops it, after which `read` is told it is no longer `alive`.
 */
export function loadOnChange(feed: LiveFeed, runId: string, read: (alive: () => boolean) => Promise<boolean | void>, onError: (error: unknown) => void): () => void {
  let alive = true;
  const isAlive = () => alive;
  const load = serialLoad(() => read(isAlive), onError, isAlive);
  load();
  const stop = feed.listen((change) => change.runs.has(runId) && load());
  return () => {
    alive = false;
    stop();
  };
}
