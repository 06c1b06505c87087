import type { Key } from "ink";
import { keyName, type ActionId, type Binding, type Handlers } from "./keymap.js";

/** What one mounted component handles. Higher priorities see keys first. */
export interface KeyLayer {
  priority: number;
  handlers: Handlers;
  /** Layers below a modal one receive nothing while it is mounted. */
  modal?: boolean | undefined;
  /** Receives keys no binding of this layer took (text entry). */
  text?: ((input: string, name: string) => void) | undefined;
}

export const PRIORITY = { app: 0, view: 1, pane: 2, overlay: 3, dialog: 4 } as const;

/**
 * Keys a dialog never keeps from the layers below it: ctrl-c quits from anywhere (through the same
 * question `q` asks while a write is under way), so a dialog that takes text never swallows it.
 */
const PAST_DIALOGS: ReadonlySet<string> = new Set(["ctrl-c"]);

/** How long a key of a chunk waits for the screen to be drawn before the next is dispatched anyway. */
const DRAW_WAIT_MS = 30;

/** A key of a chunk; `text`: printable characters, one text where a field takes it, else one key each. */
interface Pending {
  input: string;
  key: Key;
  text?: string;
}

/** ctrl and a letter, as a terminal sends it; not tab, enter, line feed or backspace (ctrl-i, -m, -j, -h). */
const CTRL_LETTER = /^[\x01-\x07\x0b\x0c\x0e-\x1a]$/;

/**
 * A chunk taken apart: tabs, backspaces and ctrl keys are keys of their own; an enter is one only as the
 * chunk's last character (inside a paste it is a space); the rest is text.
 */
function splitChunk(input: string, key: Key): Pending[] {
  const plain = Object.fromEntries(Object.keys(key).map((k) => [k, false])) as unknown as Key;
  const parts: Pending[] = [];
  const chars = [...input];
  let text = "";
  const flushText = () => {
    if (text) parts.push({ input: text, key: plain, text });
    text = "";
  };
  chars.forEach((c, i) => {
    if (c === "\t") {
      flushText();
      parts.push({ input: c, key: { ...plain, tab: true } });
    } else if (c === "\x7f" || c === "\b") {
      flushText();
      parts.push({ input: "", key: { ...plain, backspace: true } });
    } else if (CTRL_LETTER.test(c)) {
      // ctrl-u typed right after text arrives with it: it is the key, never a character of the text.
      flushText();
      parts.push({ input: String.fromCharCode(c.charCodeAt(0) + 96), key: { ...plain, ctrl: true } });
    } else if ((c === "\r" || c === "\n") && i === chars.length - 1) {
      flushText();
      parts.push({ input: "\r", key: { ...plain, return: true } });
    } else text += c === "\r" || c === "\n" ? " " : c;
  });
  flushText();
  return parts;
}

/**
 * Routes key presses to the components on screen through the key table. A key goes to the
 * highest layer that handles one of the bindings carrying that key.
 */
export class KeyRouter {
  private readonly layers = new Map<number, { layer: KeyLayer; order: number }>();
  private readonly byKey = new Map<string, Binding[]>();
  private readonly listeners = new Set<() => void>();
  private order = 0;
  private signature = "";
  /**
   * Keys of a chunk not yet dispatched: each waits for the screen to draw what the one before
   * did, so that `jj⏎` opens the row the moves reached, not the one selected before them.
   */
  private pending: Pending[] = [];
  private drawWait: NodeJS.Timeout | undefined;
  /** The screen was drawn: the next pending key goes once the commit is over. */
  private drawn = false;
  /** Keys typed while a dialog is opening, replayed into it once it is on screen. */
  private held: Pending[] | undefined;
  /** A key is being dispatched now (a dialog can open, and release held keys, within it). */
  private dispatching = false;
  private holdTimer: NodeJS.Timeout | undefined;
  /**
   * Hears a key's action that failed — threw, or returned a promise that rejected (a store that
   * cannot be reached while the action reads or writes it) — instead of the process dying of it.
   */
  onFailure: ((binding: Binding, error: unknown) => void) | undefined;

  constructor(readonly bindings: readonly Binding[]) {
    for (const binding of bindings) {
      for (const key of binding.keys) this.byKey.set(key, [...(this.byKey.get(key) ?? []), binding]);
    }
  }

  set(id: number, layer: KeyLayer): void {
    const existing = this.layers.get(id);
    this.layers.set(id, { layer, order: existing?.order ?? this.order++ });
    this.changed();
    if (layer.modal && this.held) this.release();
  }

  /**
   * A dialog is about to open (it mounts on the next render): keys typed meanwhile — `:run`
   * typed fast — wait for it instead of reaching the view below. Released after `ms` anyway.
   */
  holdForDialog(ms = 500): void {
    this.held ??= [];
    clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => this.release(), ms);
  }

  private release(): void {
    clearTimeout(this.holdTimer);
    const keys = this.held ?? [];
    this.held = undefined;
    // Held keys came before those still pending.
    this.pending.unshift(...keys);
    if (!this.dispatching && this.drawWait === undefined && !this.drawn) this.dispatchPending();
  }

  /** Handlers changed in place (the screen was drawn again): recompute what the footer shows. */
  refresh(): void {
    this.changed();
    if (this.drawWait !== undefined) {
      clearTimeout(this.drawWait);
      this.drawWait = undefined;
      this.drawn = true;
      // After the whole commit: every component's handlers are the new ones by then.
      setImmediate(() => {
        this.drawn = false;
        this.dispatchPending();
      });
    }
  }

  remove(id: number): void {
    if (this.layers.delete(id)) this.changed();
  }

  /** Layers that currently receive keys, most specific first. */
  active(): KeyLayer[] {
    const sorted = this.sorted();
    const modal = sorted.findIndex((layer) => layer.modal);
    return modal < 0 ? sorted : sorted.slice(0, modal + 1);
  }

  /** Every layer, most specific first, those below a modal one too. */
  private sorted(): KeyLayer[] {
    return [...this.layers.values()].sort((a, b) => b.layer.priority - a.layer.priority || b.order - a.order).map((l) => l.layer);
  }

  /**
   * A paste, or keys typed faster than the terminal is read, arrives as one chunk. It is taken
   * apart into the keys it holds: a tab moves the focus and a backspace deletes, also inside a
   * text field; printable characters are one chunk of text where a field takes text, and one key
   * each elsewhere (`jjj` moves three rows). An enter acts only as the chunk's last key ("text⏎"
   * typed fast); inside a paste it is a space, so that it cannot close a dialog and send the rest
   * of the chunk to the view below as commands.
   */
  dispatch(input: string, key: Key): boolean {
    const single = input.length <= 1 || key.ctrl || key.meta || input.includes("\x1b");
    // The terminal sends esc and a key pressed right after it as one "alt+key" sequence: no
    // binding uses alt, so it is the two keys it was typed as (esc then j), as in k9s.
    const altKey = key.meta && !key.escape && !key.ctrl && [...input].length === 1;
    const parts: Pending[] = altKey ? [{ input: "", key: { ...key, meta: true, escape: true } }, { input, key: { ...key, meta: false } }] : single ? [{ input, key }] : splitChunk(input, key);
    if (this.pending.length > 0) {
      this.pending.push(...parts);
      return true;
    }
    this.pending = parts;
    return this.dispatchPending();
  }

  /** Dispatches the next pending key, and waits for the screen to be drawn before the one after. */
  private dispatchPending(): boolean {
    const next = this.pending.shift();
    if (!next) return false;
    let handled = true;
    this.dispatching = true;
    try {
      if (this.held) this.held.push(next);
      else if (next.text === undefined) handled = this.dispatchOne(next.input, next.key);
      else if (this.active().some((layer) => layer.text)) handled = this.dispatchOne(next.text, next.key);
      else {
        // Outside a text field each character is a key of its own.
        const [first, ...rest] = [...next.text];
        if (rest.length > 0) this.pending.unshift({ ...next, text: rest.join("") });
        handled = this.dispatchOne(first!, next.key);
      }
    } finally {
      this.dispatching = false;
    }
    if (this.pending.length > 0 && this.drawWait === undefined) {
      // A key that changed nothing draws nothing: the next one goes after a moment anyway.
      this.drawWait = setTimeout(() => {
        this.drawWait = undefined;
        this.dispatchPending();
      }, DRAW_WAIT_MS);
    }
    return handled || this.pending.length > 0;
  }

  private dispatchOne(input: string, key: Key): boolean {
    const name = keyName(input, key);
    const candidates = this.byKey.get(name) ?? [];
    const past = PAST_DIALOGS.has(name);
    for (const layer of past ? this.sorted() : this.active()) {
      for (const binding of candidates) {
        const handler = layer.handlers[binding.id];
        if (handler) {
          this.run(binding, () => handler(name));
          return true;
        }
      }
      if (layer.text && !past) {
        layer.text(input, name);
        return true;
      }
    }
    return false;
  }

  /**
   * The bindings of key `name` that a layer on screen names without a handler now (the queue's
   * `a` with nothing marked), most specific first: what a key that applies to nothing here means here.
   */
  namedHere(name: string): Binding[] {
    const candidates = this.byKey.get(name) ?? [];
    return this.active().flatMap((layer) => candidates.filter((binding) => binding.id in layer.handlers));
  }

  /** Runs a key's action; whatever way it fails, the failure is reported, never thrown at the terminal's reader. */
  private run(binding: Binding, action: () => unknown): void {
    const failed = (error: unknown) => this.onFailure?.(binding, error);
    try {
      const result = action();
      if (result instanceof Promise) result.catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /** The bindings the screen handles now (for the footer), most specific first, one per action. */
  available(): Binding[] {
    const seen = new Set<ActionId>();
    const takenKeys = new Set<string>();
    const out: Binding[] = [];
    const active = this.active();
    for (const layer of this.sorted()) {
      // Below a dialog, only the keys that reach past it.
      const below = !active.includes(layer);
      for (const binding of this.bindings) {
        const handler = layer.handlers[binding.id];
        if (seen.has(binding.id) || !handler || handler.explains) continue;
        const free = binding.keys.filter((k) => !takenKeys.has(k) && (!below || PAST_DIALOGS.has(k)));
        if (free.length === 0) continue;
        seen.add(binding.id);
        out.push(free.length === binding.keys.length ? binding : { ...binding, keys: free });
      }
      for (const binding of out) for (const k of binding.keys) takenKeys.add(k);
    }
    return out;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Changes only when the set of handled actions does (so the footer re-renders only then). */
  snapshot = (): string => this.signature;

  private changed(): void {
    const next = this.available()
      .map((b) => `${b.id}:${b.keys.join("|")}`)
      .join(",");
    if (next === this.signature) return;
    this.signature = next;
    for (const listener of this.listeners) listener();
  }
}
