import type { InterruptRecord } from "../../../engine/index.js";
import { Lines, highlight, seg, type Line } from "../components/lines.js";
import { useServices, useSnapshot } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { PRIORITY } from "../key-router.js";
import { ago, clean, fit, inline } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";

/** The values an interrupt shows, on one line: `city=Paris budget=1200`. */
export function shownValues(interrupt: InterruptRecord): string {
  return Object.entries(interrupt.request.show ?? {})
    .map(([k, v]) => `${clean(k)}=${inline(v, true, 120)}`)
    .join(" ");
}

/** The global queue of pending interrupts, oldest first; `enter` opens the operator panel. */
export function InterruptsView({ width, height }: { width: number; height: number }) {
  const { nav, copy } = useServices();
  const { interrupts, runs } = useSnapshot();
  const [pickedId, setPickedId] = useRemembered<string | undefined>("interrupt-selected", undefined);
  let index = interrupts.findIndex((i) => i.id === pickedId);
  if (index < 0) index = 0;
  const selected = interrupts[index];
  const rows = Math.max(1, height - 2);
  const start = useWindow(interrupts.length, index, rows);
  const now = useClock(interrupts.slice(start, start + rows).map((i) => i.createdAt));
  useKeys(PRIORITY.view, {
    ...listHandlers(interrupts.length, index, rows, (i) => setPickedId(interrupts[i]?.id)),
    open: selected && (() => nav.push({ kind: "operator", interruptId: selected.id })),
    copy: selected && (() => copy(selected.id)),
  });

  const wide = width >= 120;
  const c = { k: 4, age: 4, run: wide ? 17 : 14, node: wide ? 16 : 12, kind: wide ? 9 : 0 };
  const rest = Math.max(10, width - (c.k + c.age + c.run + c.node + c.kind + (wide ? 7 : 6)));
  const question = Math.ceil(rest * 0.6);
  const values = rest - question - 1;
  const head = [fit("#", c.k), fit("AGE", c.age, "right"), fit("RUN", c.run), fit("NODE", c.node), ...(wide ? [fit("KIND", c.kind)] : []), fit("QUESTION", question), fit("SHOWS", values)];
  const lines: Line[] = [
    [seg(" Interrupts", { bold: true }), seg(`  ${interrupts.length} pending, oldest first · enter answers`, { color: MUTED })],
    [seg(` ${head.join(" ")}`, { color: MUTED, bold: true })],
  ];
  if (interrupts.length === 0) lines.push([seg(" nothing is waiting for an operator", { color: MUTED })]);
  for (let i = start; i < Math.min(interrupts.length, start + rows); i++) {
    const it = interrupts[i]!;
    const workflow = runs.get(it.runId)?.workflow;
    const line: Line = [
      seg(` ${fit(String(i + 1), c.k, "right")} `, { color: MUTED }),
      seg(`${fit(ago(it.createdAt, now), c.age, "right")} `),
      seg(`${fit(it.runId, c.run)} `, { color: ACCENT }),
      seg(`${fit(clean(it.node), c.node)} `, { bold: true }),
      ...(wide ? [seg(`${fit(it.kind, c.kind)} `, { color: "magenta" })] : []),
      seg(`${fit(clean(it.request.question ?? (workflow ? `(${workflow})` : "")), question)} `),
      seg(fit(shownValues(it), values), { color: MUTED }),
    ];
    lines.push(i === index ? highlight(line, width) : line);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
