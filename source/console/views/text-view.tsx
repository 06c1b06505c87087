import { useMemo } from "react";
import { Lines, seg, wrapLine, type Line } from "../components/lines.js";
import { useServices } from "../context.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { notHere } from "../hooks/use-run-actions.js";
import { PRIORITY } from "../key-router.js";
import { MUTED } from "../theme.js";

/** A scrollable page of lines, long ones wrapped: help, an event's payload, a value shown whole, a diff. */
export function TextView({ title, lines: given, indent = 2, width, height }: { title: string; lines: Line[]; indent?: number | undefined; width: number; height: number }) {
  const lines = useMemo(() => given.flatMap((line) => wrapLine(line, width, " ".repeat(indent))), [given, width, indent]);
  const [top, setTop] = useRemembered("top", 0);
  const page = Math.max(1, height - 1);
  const last = Math.max(0, lines.length - page);
  const start = Math.min(top, last);
  const { nav, ui } = useServices();
  // q closes a page laid over a view (as in less, k9s, lazygit) rather than quitting the console.
  useKeys(PRIORITY.view, {
    ...listHandlers(last + 1, start, page, setTop),
    close: () => nav.pop(),
    filter: notHere(ui, "/: a page of text has no filter; j/k and pgup/pgdn scroll it, g and G go to its ends"),
  });
  const position = lines.length > page ? `  ${start + 1}-${Math.min(lines.length, start + page)} of ${lines.length}` : "";
  return <Lines lines={[[seg(` ${title}`, { bold: true }), seg(`${position}  esc back`, { color: MUTED })], ...lines.slice(start, start + page)]} width={width} height={height} />;
}
