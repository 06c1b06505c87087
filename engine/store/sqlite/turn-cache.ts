/**
 * Values kept until the end of the current turn of the event loop: what one read inflated, for
 * the reads made with it (a run's checkpoints and tasks refer to the same rows). Rows never
 * change once written, and what is kept is text, so that no two records share objects.
 */
export class TurnCache<K, V> {
  private values: Map<K, V> | undefined;

  /** The value kept for `key`, or the one `load` finds (kept when found). */
  get(key: K, load: () => V | undefined): V | undefined {
    if (!this.values) {
      const values = new Map<K, V>();
      this.values = values;
      setImmediate(() => {
        if (this.values === values) this.values = undefined;
      });
    }
    let value = this.values.get(key);
    if (value === undefined) {
      value = load();
      if (value !== undefined) this.values.set(key, value);
    }
    return value;
  }

  delete(key: K): void {
    this.values?.delete(key);
  }
}
