/**
 * A list's `/` filter as typed: `key:value` tokens for the keys that list knows (by name or short
 * name; `status:paused,failed` gives two values), and free words for everything else. A word with
 * a colon that names no key — `interrupt:` copied from the NOW column — is text to find, not a key.
 */
export interface ParsedFilter<K extends string> {
  values: Record<K, string[]>;
  words: string[];
}

export function parseFilter<K extends string>(text: string, keys: Readonly<Record<K, readonly string[]>>): ParsedFilter<K> {
  const names = Object.keys(keys) as K[];
  const values = Object.fromEntries(names.map((k) => [k, [] as string[]])) as Record<K, string[]>;
  const words: string[] = [];
  for (const token of text.trim().toLowerCase().split(/\s+/).filter(Boolean)) {
    const colon = token.indexOf(":");
    const key = colon > 0 ? names.find((k) => keys[k].includes(token.slice(0, colon))) : undefined;
    const value = colon > 0 ? token.slice(colon + 1) : "";
    if (key !== undefined && value) values[key].push(...value.split(",").filter(Boolean));
    else words.push(token);
  }
  return { values, words };
}

/** Every word is found in `text` (case aside). */
export function hasWords(text: string, words: readonly string[]): boolean {
  const lower = text.toLowerCase();
  return words.every((w) => lower.includes(w));
}

/** How a list's filter keys read in its prompt and help: `status: workflow:`. */
export function keyNames(keys: Readonly<Record<string, readonly string[]>>): string {
  return Object.keys(keys)
    .map((k) => `${k}:`)
    .join(" ");
}
