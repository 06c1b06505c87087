/** The editor a person chose, run through the shell, and where it was chosen (for what a failure says). */
export interface EditorCommand {
  command: string;
  /** `$VISUAL`, `$EDITOR`, or that neither is set (vi then). */
  from: string;
}

/** `$VISUAL`, else `$EDITOR`, else vi, as git chooses. */
export function chosenEditor(env: NodeJS.ProcessEnv = process.env): EditorCommand {
  if (env.VISUAL?.trim()) return { command: env.VISUAL.trim(), from: "$VISUAL" };
  if (env.EDITOR?.trim()) return { command: env.EDITOR.trim(), from: "$EDITOR" };
  return { command: "vi", from: "neither $VISUAL nor $EDITOR is set" };
}

/**
 * Why an editor run through the shell ended badly, in words: the shell exits 127 for a command it
 * did not find and 126 for one it cannot run, which "exited with 127" would leave to be guessed.
 */
export function editorFailure(editor: EditorCommand, status: number | null, signal: NodeJS.Signals | null): string {
  const named = `editor "${editor.command}" (${editor.from})`;
  if (status === 127) return `${named} was not found: set $VISUAL or $EDITOR to an editor installed here`;
  if (status === 126) return `${named} cannot be run: it is not an executable program`;
  return `editor "${editor.command}" exited with ${status !== null ? `code ${status}` : signal}`;
}
