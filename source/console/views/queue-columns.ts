import type { InterruptRecord } from "../../../engine/index.js";
import { clean, displayWidth, fit } from "../text.js";
import { shownValues } from "./interrupt-rows.js";

/** The interrupt queue's columns at a width: how wide each is, 0 for one left out. */
export interface QueueColumns {
  k: number;
  age: number;
  run: number;
  node: number;
  kind: number;
  question: number;
  /** The DEADLINE column (what a deadline answers, and when): from 120 columns, when some row has one. */
  deadline: number;
  /** The SHOWS column (the values an interrupt shows). */
  values: number;
  /** SHOWS comes before the question: on a narrow screen it is what tells the rows apart. */
  valuesFirst: boolean;
}

/** The widest a run id's column gets on a narrow screen: ids are cut from the end, where they differ. */
const NARROW_RUN = 16;

/** The widest DEADLINE gets: a long custom decision is cut rather than the question. */
const MAX_DEADLINE = 22;

/**
 * Room for a deadline's words, `reject in 1h59m` or past it `reject (due 1h59m ago)`, with the
 * longest decision of the queue's rows (all of them, so it stays put while the time counts down);
 * 0 when none has a deadline.
 */
function deadlineWidth(rows: readonly InterruptRecord[]): number {
  const widths = rows.flatMap((i) => (i.deadline ? [displayWidth(clean(i.deadline.decision)) + " (due 1h59m ago)".length] : []));
  return widths.length === 0 ? 0 : Math.min(MAX_DEADLINE, Math.max("DEADLINE".length, ...widths));
}

/**
 * The columns for `width`. From 80 columns every one that fits is shown (DEADLINE from 120).
 * Narrower, the question keeps the room — unless rows would then read alike (the same node
 * asking the same question in several runs, or questions that differ only past where they are
 * cut): the values they show, else their run ids, come back, as few as tell every row of the
 * queue apart (all its rows, not the page shown, so the columns stay put while paging).
 */
export function queueColumns(width: number, rows: readonly InterruptRecord[], question: (i: InterruptRecord) => string): QueueColumns {
  if (width >= 80) {
    const wide = width >= 120;
    const c = { k: 4, age: 4, run: wide ? 17 : 14, node: wide ? 16 : 12, kind: wide ? 9 : 0, deadline: wide ? deadlineWidth(rows) : 0 };
    const rest = Math.max(10, width - (c.k + c.age + c.run + c.node + c.kind + c.deadline + (wide ? 7 : 6) + (c.deadline > 0 ? 1 : 0)));
    const asked = Math.ceil(rest * 0.6);
    return { ...c, question: asked, values: rest - asked - 1, valuesFirst: false };
  }
  const runWidth = Math.min(NARROW_RUN, Math.max(0, ...rows.map((i) => i.runId.length)));
  const layout = (run: boolean, values: boolean): QueueColumns => {
    const c = { k: 3, age: 4, run: run ? runWidth : 0, node: 10, kind: 0, deadline: 0 };
    const rest = Math.max(10, width - (c.k + c.age + c.run + c.node + (run ? 6 : 5) + (values ? 1 : 0)));
    const shows = values ? Math.floor(rest * 0.4) : 0;
    return { ...c, question: rest - shows, values: shows, valuesFirst: true };
  };
  const choices = [layout(false, false), layout(false, true), layout(true, false), layout(true, true)];
  return choices.find((c) => tellsApart(c, rows, question)) ?? choices[0]!;
}

/** A row as it reads in these columns: what of it is left after each column's cut. */
function rowText(c: QueueColumns, i: InterruptRecord, question: (i: InterruptRecord) => string): string {
  return [
    c.run > 0 ? runCell(c, i.runId) : "",
    fit(clean(i.node), c.node),
    c.kind > 0 ? i.kind : "",
    c.values > 0 ? fit(shownValues(i), c.values) : "",
    fit(clean(question(i)), c.question),
  ].join("\u0000");
}

function tellsApart(c: QueueColumns, rows: readonly InterruptRecord[], question: (i: InterruptRecord) => string): boolean {
  const seen = new Set<string>();
  for (const i of rows) {
    const text = rowText(c, i, question);
    if (seen.has(text)) return false;
    seen.add(text);
  }
  return true;
}

/** A run id in its column; cut on a narrow screen from its start, which ids share (`run-`), not from its end, where they differ. */
export function runCell(c: QueueColumns, runId: string): string {
  if (!c.valuesFirst || runId.length <= c.run) return fit(runId, c.run);
  return `…${runId.slice(runId.length - c.run + 1)}`;
}
