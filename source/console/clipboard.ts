/** Puts text on the operator's clipboard. */
export type Clipboard = (text: string) => void;

/**
 * The clipboard of the terminal the console draws on, through the OSC 52 sequence: it reaches
 * the operator's own machine over ssh, where a clipboard command on the server would not
 * (tmux passes it on with `set -g set-clipboard on`).
 */
export function terminalClipboard(write: (data: string) => void): Clipboard {
  return (text) => write(`\u001b]52;c;${Buffer.from(text, "utf8").toString("base64")}\u0007`);
}
