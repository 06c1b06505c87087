import { checkSignalName, errorMessage, parseJsonText } from "../../engine/index.js";
import type { Ui } from "./context.js";

/** A signal as the operator typed it: its name, and its data (undefined: none). */
export interface TypedSignal {
  name: string;
  data: unknown;
}

/**
 * Asks for a signal's name (`offered` typed in already, `names` completed with tab; `waits` tells
 * who waits for it), then its data as JSON (empty: none). A name the engine would refuse, or data
 * that is not JSON, is asked for again with what was typed and why it was refused, to mend it in
 * place; esc leaves, and nothing is sent.
 */
export async function askSignal(ui: Ui, offered: string, names: readonly string[], waits: string): Promise<TypedSignal | undefined> {
  let name: string | undefined;
  for (let typed = offered, refused = ""; name === undefined; ) {
    const text = await ui.prompt({
      title: "Signal name:",
      initial: typed,
      complete: (t) => names.filter((n) => n.startsWith(t) && n !== t),
      hint: refused ? `${refused}enter ok · esc cancels` : `${waits ? `${waits} · ` : ""}letters, digits, . _ : - · enter ok · esc cancels`,
    });
    typed = text?.trim() ?? "";
    if (!typed) return void ui.report({ tone: "info", text: "no signal name; nothing sent" });
    try {
      checkSignalName(typed);
      name = typed;
    } catch (error) {
      refused = `${errorMessage(error)} · `;
    }
  }
  for (let typed = "", refused = ""; ; ) {
    const text = await ui.prompt({ title: `${name} data (JSON):`, initial: typed, hint: `${refused || 'e.g. {"amount": 42}; empty sends none · '}enter ok · esc cancels` });
    if (text === undefined) return void ui.report({ tone: "info", text: `signal ${name} canceled; nothing sent` });
    const parsed = text.trim() === "" ? { value: undefined } : parseJsonText(text);
    if (parsed.error === undefined) return { name, data: parsed.value };
    [typed, refused] = [text, `not JSON (${parsed.error}): mend it · `];
  }
}
