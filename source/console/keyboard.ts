/**
 * What reaches Ink from the terminal: keys, and text as it can be typed. A paste may carry escape
 * sequences that are not keys — the colours of a copied log line (`ESC[31m`), a terminal's reply,
 * a window title — and Ink takes some of them for a ctrl key without a name, on which its input
 * hook throws (ink 6.8, use-input.ts: `input.startsWith` of undefined) and the process dies. They
 * are left out before Ink reads them, so a paste keeps only what can be typed (as the README
 * promises), and a stray sequence is no key at all.
 */

/**
 * CSI sequences that are keys Ink names: arrows, home and end (with modifiers), shift-tab, and the
 * `~` keys it knows (home, insert, delete, end, pgup, pgdn, F1-F12). Any other `~` number — the
 * markers of a bracketed paste among them — is no key.
 */
const KEY_CSI = /^\u001b\[(?:\[[A-E]|(?:1(?:;\d+)?)?[A-DFHZ]|(?:[1-8]|1[1-57-9]|2[0-134])(?:;\d+)?~)$/;
/** SS3 keys: arrows, home and end, F1-F4 of some terminals. */
const KEY_SS3 = /^\u001bO[A-DFHPQRS]$/;

/** A control sequence at `at` (ESC [ or ESC O, or the C1 CSI), its end, or undefined when the chunk ends inside it. */
function sequenceEnd(text: string, at: number): number | undefined {
  const csi = text[at] === "\u009b" ? at + 1 : text[at + 1] === "[" ? at + 2 : -1;
  if (csi >= 0) {
    // Parameters and intermediates, then one final byte (ECMA-48); a legacy `ESC [ [ A` key too.
    let i = csi;
    if (csi === at + 2 && text[i] === "[") i++;
    while (i < text.length && /[\x20-\x3f]/.test(text[i]!)) i++;
    return i < text.length ? i + 1 : undefined;
  }
  if (text[at + 1] === "O") return at + 3 <= text.length ? at + 3 : undefined;
  // OSC, DCS, SOS, PM and APC strings run to BEL or ST (ESC \\). One not ended in this chunk is
  // taken as the keys it may be (esc, then `]` typed fast): holding it could swallow every key after.
  if (/[\]PX^_]/.test(text[at + 1] ?? "")) {
    for (let i = at + 2; i < text.length; i++) {
      if (text[i] === "\u0007") return i + 1;
      if (text[i] === "\u001b" && text[i + 1] === "\\") return i + 2;
    }
  }
  return at + 1;
}

export interface KeyboardFilter {
  /** What Ink may see of a chunk the terminal sent. */
  push(chunk: string): string;
  /** A sequence cut at the end of the last chunk is waiting for the rest of it. */
  readonly holding: boolean;
  /** Gives up waiting: what was held, as the keys it can be (its ESC left out, as Ink does). */
  flush(): string;
}

/**
 * Filters what a terminal sends, chunk by chunk: keys and typed text pass, other escape sequences
 * do not. A sequence cut between two chunks waits for the rest (a lone ESC, the escape key, never
 * waits).
 */
export function keyboardFilter(): KeyboardFilter {
  let held = "";
  return {
    get holding() {
      return held !== "";
    },
    flush() {
      const rest = held.replace(/^[\u001b\u009b]/, "");
      held = "";
      return rest;
    },
    push(chunk) {
      const text = held + chunk;
      held = "";
      let out = "";
      let at = 0;
      while (at < text.length) {
        const next = text.slice(at).search(/[\u001b\u009b]/);
        if (next < 0) {
          out += text.slice(at);
          break;
        }
        out += text.slice(at, at + next);
        at += next;
        // A lone ESC at the end is the escape key (Ink tells it from a sequence by waiting itself),
        // and ESC ESC is the escape key, then whatever follows it.
        if (text[at] === "\u001b" && (at === text.length - 1 || text[at + 1] === "\u001b")) {
          out += "\u001b";
          at++;
          continue;
        }
        const end = sequenceEnd(text, at);
        if (end === undefined) {
          held = text.slice(at);
          break;
        }
        const sequence = text.slice(at, end);
        // ESC and one character: the two keys it was typed as (esc, then the key), or alt and the key.
        if (end === at + 1) out += text[at] === "\u001b" ? "\u001b" : "";
        else if (KEY_CSI.test(sequence) || KEY_SS3.test(sequence)) out += sequence;
        at = end;
      }
      return out;
    },
  };
}

/** The part of a readable stream Ink reads input from. */
interface Readable {
  read(...args: unknown[]): unknown;
  emit(event: "readable"): unknown;
}

/** How long a sequence cut between two chunks waits for the rest before it is taken as keys. */
const HOLD_MS = 50;

/**
 * Makes `stdin` hand Ink only keys and typed text (see `keyboardFilter`); returns what puts it
 * back as it was. Ink reads its input with `stdin.read()` on each `readable` event.
 */
export function filterKeyboard(stdin: Readable): () => void {
  const read = stdin.read;
  const filter = keyboardFilter();
  let timer: NodeJS.Timeout | undefined;
  let due = false;
  stdin.read = function (this: unknown, ...args: unknown[]) {
    for (;;) {
      const chunk = read.apply(this, args);
      if (chunk === null || chunk === undefined) {
        if (!due || !filter.holding) return chunk;
        due = false;
        return filter.flush() || chunk;
      }
      clearTimeout(timer);
      due = false;
      const text = filter.push(typeof chunk === "string" ? chunk : String(chunk));
      if (filter.holding) {
        timer = setTimeout(() => ((due = true), stdin.emit("readable")), HOLD_MS);
        timer.unref?.();
      }
      // A chunk of which nothing is left is no input: read on, as if it had not arrived.
      if (text !== "") return text;
    }
  };
  return () => {
    clearTimeout(timer);
    stdin.read = read;
  };
}
