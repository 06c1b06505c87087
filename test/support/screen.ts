/**
 * A terminal's screen, as far as the console draws on it: text at the cursor, line feeds, and the
 * cursor moves and erasures Ink and the console use (CUU, CHA, CUP, ED, EL); colours and modes are
 * read and left out. What a run of writes leaves on the screen can be compared with another run's.
 */
export class ScreenModel {
  private readonly cells: string[][];
  private row = 0;
  private col = 0;

  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    this.cells = Array.from({ length: rows }, () => Array<string>(columns).fill(" "));
  }

  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === "\u001b" && text[i + 1] === "[") {
        const match = /^\u001b\[([?0-9;]*)([A-Za-z])/.exec(text.slice(i))!;
        this.control(match[1]!, match[2]!);
        i += match[0].length - 1;
      } else if (c === "\n") {
        this.row = Math.min(this.rows - 1, this.row + 1);
        this.col = 0;
      } else if (c === "\r") this.col = 0;
      else if (this.col < this.columns) this.cells[this.row]![this.col++] = c;
    }
  }

  lines(): string[] {
    return this.cells.map((row) => row.join("").trimEnd());
  }

  private control(params: string, final: string): void {
    const [a = 1, b = 1] = params.split(";").map((p) => (p === "" ? 1 : Number(p)));
    if (params.startsWith("?") || final === "m") return;
    if (final === "A") this.row = Math.max(0, this.row - a);
    else if (final === "G") this.col = a - 1;
    else if (final === "H") [this.row, this.col] = params === "" ? [0, 0] : [a - 1, b - 1];
    else if (final === "J") for (let r = this.row; r < this.rows; r++) this.cells[r]!.fill(" ", r === this.row ? this.col : 0);
    else if (final === "K") this.cells[this.row]!.fill(" ", params === "2" ? 0 : this.col);
  }
}
