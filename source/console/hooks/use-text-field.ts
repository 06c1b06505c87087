import { useRef, useState } from "react";
import type { Handlers } from "../keymap.js";
import { graphemes, printable } from "../text.js";

/**
 * State whose latest value handlers can read at once: keys typed ahead are replayed into a
 * dialog faster than it redraws, and `enter` must see every character typed before it.
 */
export function useLiveState<T>(initial: T): [T, (update: (value: T) => T) => void, { readonly current: T }] {
  const ref = useRef(initial);
  const [, redraw] = useState(0);
  const set = (update: (value: T) => T) => {
    ref.current = update(ref.current);
    redraw((n) => n + 1);
  };
  return [ref.current, set, ref];
}

/** Longest text a field takes: a paste of a whole file is cut, not drawn. */
const MAX_CHARS = 1000;

/**
 * One line of text after a key, as a shell's line editor does it: printable keys append,
 * backspace removes the last character, other control keys change nothing (and are never
 * inserted as text).
 */
export function editLine(text: string, input: string, name: string): string {
  if (name === "backspace") return [...graphemes(text)].slice(0, -1).join("");
  if (input.length === 0 || name.startsWith("ctrl-")) return text;
  return (text + printable(input)).slice(0, MAX_CHARS);
}

/** The text before the last word (and the spaces after that word), as ctrl-w leaves it. */
export function withoutLastWord(text: string): string {
  return text.replace(/\S*\s*$/u, "");
}

export interface TextField {
  text: string;
  /** The text including keys not yet drawn. */
  now: { readonly current: string };
  set(text: string): void;
  /** The field's own keys (ctrl-u clears it, ctrl-w deletes the last word), for `useKeys`. */
  handlers: Pick<Handlers, "clearText" | "deleteWord">;
  /** Takes a key no binding took, for `useKeys`' `text` option. */
  type(input: string, name: string): void;
}

/**
 * The one text field of the console (the `/` filters, the palette, reasons and responses): every
 * dialog that takes text edits it the same way. `onChange` hears each change.
 */
export function useTextField(initial: string, onChange?: (text: string) => void, enabled = true): TextField {
  const [text, setText, now] = useLiveState(initial);
  const update = (next: (t: string) => string) => {
    const before = now.current;
    setText(next);
    if (now.current !== before) onChange?.(now.current);
  };
  return {
    text,
    now,
    set: (value) => update(() => value),
    handlers: enabled ? { clearText: () => update(() => ""), deleteWord: () => update(withoutLastWord) } : {},
    type: (input, name) => {
      if (enabled) update((t) => editLine(t, input, name));
    },
  };
}
