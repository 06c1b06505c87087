import { clean } from "../text/plain.js";

/**
 * Where a command writes its result. Human output is text whose values are stripped of terminal
 * control sequences (state and events hold text from models and users); `--json` output is JSON
 * with every control character escaped (see `json`).
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {}

  /**
   * Text for people, each of its lines made safe to print: what it quotes (a node's name, a
   * field of a workflow file, an error a node threw) may hold escape sequences that would clear
   * the screen, retitle the window or forge lines.
   */
  line(text = ""): void {
    this.stdout.write(`${safeLines(text)}\n`);
  }

  /** Text of several lines (a drawn graph). */
  block(text: string): void {
    this.line(text);
  }

  /** One JSON document on one line (also one NDJSON record). */
  value(value: unknown): void {
    this.stdout.write(`${json(value)}\n`);
  }

  /** Progress and notes for people: stderr, so stdout stays the result. */
  note(text: string): void {
    this.stderr.write(`${safeLines(text)}\n`);
  }

  async table(headers: readonly string[], rows: readonly (readonly string[])[]): Promise<void> {
    for (const line of await formatTable(headers, rows)) this.line(line);
  }

  /** A listing: one JSON array for scripts; for people a table, or `empty` on stderr when there is nothing. */
  async list<T>(items: readonly T[], empty: string, headers: readonly string[], row: (item: T) => string[]): Promise<void> {
    if (this.json) this.value(items);
    else if (items.length === 0) this.note(empty);
    else await this.table(headers, items.map(row));
  }
}

/**
 * JSON that is safe to print on a terminal. JSON.stringify escapes C0 controls but leaves C1
 * controls (U+009B is CSI) and bidirectional overrides in strings as they are; here they are
 * escaped too, which is still the same JSON.
 */
export function json(value: unknown, indent?: number): string {
  // eslint-disable-next-line no-control-regex
  return (JSON.stringify(value, null, indent) ?? "null").replace(/[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Columns padded to their widest cell; the last column is not padded. */
export async function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): Promise<string[]> {
  const all = [headers, ...rows].map((row) => row.map((cell) => clean(cell)));
  const stringWidth = await widthOf(all.flat());
  const widths = headers.map((_, i) => Math.max(...all.map((row) => stringWidth(row[i] ?? ""))));
  return all.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat(widths[i]! - stringWidth(cell))))
      .join("  ")
      .trimEnd(),
  );
}

/**
 * How many columns a cell takes: its length where every cell is printable ASCII, as nearly all
 * are; else as string-width counts them, loaded only then, since setting it up (Unicode tables,
 * a grapheme segmenter) cost about 30 ms of every command's start.
 */
async function widthOf(cells: readonly string[]): Promise<(cell: string) => number> {
  if (cells.every((cell) => /^[\x20-\x7e]*$/.test(cell))) return (cell) => cell.length;
  return (await import("string-width")).default;
}

/** Each line of `text` as `clean` makes it, the line breaks kept. */
export function safeLines(text: string): string {
  return text.split("\n").map(clean).join("\n");
}
