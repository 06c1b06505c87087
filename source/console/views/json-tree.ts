import { inline } from "../text.js";

/** One row of a folded JSON tree. */
export interface TreeRow {
  /** `$.a.b[0]`, the path notation of every pitwall message. */
  path: string;
  depth: number;
  key: string;
  /** For a container: `{3 keys}` or `[12 items]`; for a leaf: the value on one line. */
  text: string;
  container: boolean;
  open: boolean;
  value: unknown;
  /** The value does not fit in its row: `enter` shows it whole. */
  long: boolean;
}

const keyPath = (parent: string, key: string | number) =>
  typeof key === "number" ? `${parent}[${key}]` : /^[A-Za-z_$][\w$-]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;

/** Containers open by default: the top levels, when they are small. */
function openByDefault(depth: number, size: number): boolean {
  return depth < 1 || (depth < 2 && size <= 12);
}

/**
 * The rows of a JSON value with containers folded or unfolded. `toggled` holds the paths the
 * operator flipped from their default. Only up to `limit` rows are produced (a huge state never
 * builds a huge list) — and then every top-level key still has its row, shown as it is but with
 * what is inside left out (`cut`), so that no key goes missing below a big one.
 */
export function treeRows(value: unknown, toggled: ReadonlySet<string>, valueWidth: number, limit = 5_000): { rows: TreeRow[]; cut: boolean } {
  const rows: TreeRow[] = [];
  let cut = false;
  const visit = (key: string, v: unknown, path: string, depth: number) => {
    if (rows.length >= limit && depth > 0) {
      cut = true;
      return;
    }
    const container = typeof v === "object" && v !== null;
    if (!container) {
      const text = inline(v, false, valueWidth * 4 + 16);
      rows.push({ path, depth, key, text, container, open: false, value: v, long: text.length > valueWidth });
      return;
    }
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    const open = openByDefault(depth, entries.length) !== toggled.has(path);
    const text = Array.isArray(v) ? `[${entries.length} item${entries.length === 1 ? "" : "s"}]` : `{${entries.length} key${entries.length === 1 ? "" : "s"}}`;
    rows.push({ path, depth, key, text, container, open, value: v, long: false });
    if (open) for (const [k, child] of entries) visit(String(k), child, keyPath(path, k), depth + 1);
  };
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) visit(k, v, keyPath("$", k), 0);
  } else visit("$", value, "$", 0);
  return { rows, cut };
}
