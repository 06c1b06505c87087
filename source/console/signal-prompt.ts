import { checkSignalName, errorMessage, parseJsonText } from "../../engine/index.js";
import type { Ui } from "./context.js";

/** A signal as the operator typed it: its name, and its data (undefined: none). */
export interface TypedSignal {
  name: string;
  data: unknown;
}

/**
 * Asks for a signal's name (`offered` typed in already, `names` completed with tab; `waits` tells
 * who waits for it), then its data as JSON (empty: none). A name the engine would refuse is said
 * before the data is asked for, and text that is not JSON is refused: the footer says why and
 * nothing is sent, as when a prompt is left with esc.
 */
export async function askSignal(ui: Ui, offered: string, names: readonly string[], waits: string): Promise<TypedSignal | undefined> {
  const typed = await ui.prompt({
    title: "Signal name:",
    initial: offered,
    complete: (text) => names.filter((n) => n.startsWith(text) && n !== text),
    hint: `${waits ? `${waits} · ` : ""}letters, digits, . _ : - · enter ok · esc cancels`,
  });
  const name = typed?.trim();
  if (!name) return void ui.report({ tone: "info", text: "no signal name; nothing sent" });
  try {
    checkSignalName(name);
  } catch (error) {
    return void ui.report({ tone: "error", text: `nothing sent: ${errorMessage(error)}` });
  }
  const text = await ui.prompt({ title: `${name} data (JSON):`, hint: 'e.g. {"amount": 42}; empty sends none · enter ok · esc cancels' });
  if (text === undefined) return void ui.report({ tone: "info", text: `signal ${name} canceled; nothing sent` });
  const parsed = text.trim() === "" ? { value: undefined } : parseJsonText(text);
  if (parsed.error !== undefined) return void ui.report({ tone: "error", text: `signal ${name} not sent: its data is not JSON (${parsed.error})` });
  return { name, data: parsed.value };
}
