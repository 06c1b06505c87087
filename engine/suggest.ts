/**
 * "Did you mean": the known name a mistyped one most likely meant. Shared by every message that
 * names something unknown (a workflow's fields and targets, actions, state keys, schema keywords).
 */

/** Edits from one word to the other, a swap of two neighbouring letters counting as one. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, ignoring case, when it is close enough to be a slip: a third
 * of its letters wrong at most, or one of them the start of the other (`timeout`, `timeoutMs`).
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  let best: { name: string; score: number } | undefined;
  for (const name of candidates) {
    if (name === word) continue;
    const c = name.toLowerCase();
    const prefix = Math.min(w.length, c.length) >= 4 && (c.startsWith(w) || w.startsWith(c));
    const score = prefix ? 0.5 : distance(w, c);
    if (score <= Math.max(1, Math.floor(w.length / 3)) && (!best || score < best.score)) best = { name, score };
  }
  return best?.name;
}

/** ` (did you mean "next"?)`, or nothing when no candidate is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closest(word, candidates);
  return match === undefined ? "" : ` (did you mean ${JSON.stringify(match)}?)`;
}
