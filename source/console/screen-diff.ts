/**
 * Ink writes each frame whole: the rows it drew erased (`ESC[2K ESC[1A …`), then every row again.
 * On a busy store that is the whole screen several times a second (a megabyte in 20 s over ssh).
 * Ink 6.8's own incremental mode cannot stand in: for a frame shorter than the terminal (the
 * console leaves its last row free) it moves up one row too few, and each frame lands a row lower.
 *
 * So the console hands Ink a stream that keeps what is on the screen and turns each frame into the
 * rows that changed, each written at its place (the console owns the alternate screen, and Ink's
 * frames start at its top-left corner), the cursor left under the frame where Ink expects it.
 */

/** `ansi-escapes`' eraseLines(n), which starts each of Ink's frames (empty before the first). */
const ERASE_LINES = /^(?:(?:\u001b\[2K\u001b\[1A)*\u001b\[2K\u001b\[G)?/;
const HOME_AND_CLEAR = "\u001b[H\u001b[J";

export interface DiffedScreen {
  /** The stream to give Ink as its stdout. */
  stream: NodeJS.WriteStream;
  /** Stops following the terminal's size. */
  close(): void;
}

/** A stream over `out` (the terminal) that writes only the rows of Ink's frames that changed. */
export function diffedScreen(out: NodeJS.WriteStream): DiffedScreen {
  // The rows on the screen from its top, as last written; undefined: unknown, draw the next frame whole.
  let shown: string[] | undefined;
  const repaint = () => {
    shown = undefined;
  };
  // Ink clears what it drew when an editor gave the terminal back (the console's suspend), which
  // draws the next frame whole too.
  // A resized terminal may have moved or cut what it showed.
  out.on("resize", repaint);

  const write = (data: unknown, ...rest: unknown[]): boolean => {
    const pass = () => (out.write as (...args: unknown[]) => boolean)(data, ...rest);
    if (typeof data !== "string") return pass();
    const erase = ERASE_LINES.exec(data)![0];
    const frame = data.slice(erase.length);
    if (!frame.includes("\n")) {
      if (erase === "" || frame !== "") return pass();
      // Ink cleared what it drew (before drawing again after the editor, or on a narrower terminal).
      shown = undefined;
      return (out.write as (...args: unknown[]) => boolean)(HOME_AND_CLEAR, ...rest);
    }
    if (erase === "" && shown !== undefined) {
      // Not a frame drawn over the last one (Ink cleared the terminal its own way): it goes as it is.
      shown = undefined;
      return pass();
    }
    const rows = (frame.endsWith("\n") ? frame.slice(0, -1) : frame).split("\n");
    let text = shown === undefined ? HOME_AND_CLEAR : "";
    for (let i = 0; i < rows.length; i++) if (shown?.[i] !== rows[i]) text += `\u001b[${i + 1};1H\u001b[2K${rows[i]}`;
    for (let i = rows.length; i < (shown?.length ?? 0); i++) text += `\u001b[${i + 1};1H\u001b[2K`;
    shown = rows;
    // Where Ink left the cursor: on the row under its frame.
    return (out.write as (...args: unknown[]) => boolean)(`${text}\u001b[${rows.length + 1};1H`, ...rest);
  };

  const stream = new Proxy(out, {
    get(target, property) {
      if (property === "write") return write;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { stream, close: () => out.off("resize", repaint) };
}
