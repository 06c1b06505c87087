import { useEffect, useMemo, useRef } from "react";
import { errorMessage, type EventRecord } from "../../../engine/index.js";
import { Lines, seg, type Line } from "../components/lines.js";
import { useServices } from "../context.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { loadOnChange } from "../hooks/serial-load.js";
import { PRIORITY } from "../key-router.js";
import { clean, clock, fit } from "../text.js";
import { MUTED } from "../theme.js";
import { jsonLines } from "./json-lines.js";
import { eventText } from "../../text/event-text.js";
import { eventColor } from "./event-text.js";

/** How many of a run's most recent events the tab keeps. */
const KEEP = 5_000;
const PAGE = 1_000;

/** A run's events, read once and then from where the last read stopped, whenever the run changes. */
function useRunEvents(runId: string): { events: EventRecord[]; error?: string } {
  const { store, feed } = useServices();
  // Kept while a page is stacked on the tab (an event's payload): coming back shows them at once.
  const [state, setState] = useRemembered<{ events: EventRecord[]; error?: string }>(`run-events:${runId}`, { events: [] });
  const kept = useRef(state.events);
  useEffect(() => {
    let events: EventRecord[] = kept.current;
    return loadOnChange(
      feed,
      runId,
      async (alive) => {
        if (events.length === 0) {
          // Open on the run's tail: a long run's whole log is never read.
          events = await store.readEvents({ runId, last: KEEP });
        }
        for (;;) {
          const after = events[events.length - 1]?.seq ?? 0;
          const page = await store.readEvents({ runId, after, limit: PAGE });
          if (page.length === 0) break;
          events = events.concat(page);
          if (events.length > KEEP) events = events.slice(-KEEP);
          if (page.length < PAGE) break;
        }
        if (alive()) setState({ events });
      },
      (error) => setState({ events, error: errorMessage(error) }),
    );
  }, [store, feed, runId]);
  return state;
}

/** The run's event log, following new events (`f`), filterable by type or node; `enter` shows a payload. */
export function EventsTab({ runId, width, height }: { runId: string; width: number; height: number }) {
  const { nav, ui } = useServices();
  const { events, error } = useRunEvents(runId);
  const [filter, setFilter] = useRemembered("events-filter", "");
  const [follow, setFollow] = useRemembered("events-follow", true);
  // The selected event by its sequence number: new events slide the window, not the selection.
  const [pickedSeq, setPickedSeq] = useRemembered<number | undefined>("events-selected", undefined);
  const shown = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return events;
    return events.filter((e) => words.every((w) => `${e.type} ${eventText(e).subject ?? ""} ${e.actor}`.toLowerCase().includes(w)));
  }, [events, filter]);
  const pickedAt = pickedSeq === undefined ? -1 : shown.findIndex((e) => e.seq >= pickedSeq);
  const index = follow || pickedAt < 0 ? shown.length - 1 : pickedAt;
  const rows = Math.max(1, height - 1);
  const start = useWindow(shown.length, Math.max(0, index), rows);
  const selected = shown[index];

  const move = listHandlers(shown.length, index, rows, (i) => {
    setPickedSeq(shown[i]?.seq);
    setFollow(i === shown.length - 1 && follow);
  });
  useKeys(PRIORITY.pane, {
    ...move,
    bottom: () => (setFollow(true), setPickedSeq(undefined)),
    follow: () => (setPickedSeq(shown[index]?.seq), setFollow((f) => !f)),
    filter: () => void ui.prompt({ title: "/", initial: filter, hint: `event type or node, e.g. task.failed or hotels${events.length < total ? `, among the last ${events.length}` : ""} — enter apply · esc cancel` }).then((t) => t !== undefined && setFilter(t.trim())),
    back: filter !== "" && (() => setFilter("")),
    open:
      selected &&
      (() =>
        nav.push({
          kind: "text",
          // The record's time is epoch milliseconds: the page says when that was.
          title: `event ${selected.runSeq} · ${selected.type} · ${new Date(selected.time).toISOString()}`,
          lines: jsonLines(selected, width),
        })),
  });

  const typeWidth = 20;
  // Event numbers as wide as the run's largest, so that 123,456 is not cut to "1234…".
  const seqWidth = Math.max(5, String(events[events.length - 1]?.runSeq ?? 0).length);
  // runSeq counts a run's events from 1: the first one kept says how many came before.
  const total = events[events.length - 1]?.runSeq ?? 0;
  const kept = events.length < total ? `last ${events.length} of ${total}` : `${events.length}`;
  const nodeWidth = Math.min(16, Math.max(6, Math.floor(width / 8)));
  const lines: Line[] = [
    [
      seg(` ${shown.length !== events.length ? `${shown.length} of the ` : ""}${kept} events`, { bold: true }),
      seg(follow ? "  following ●" : "  paused (f follows)", { color: follow ? "green" : MUTED }),
      ...(filter ? [seg(`  filter: ${clean(filter)}`, { color: "yellow" })] : []),
      ...(error ? [seg(`  ${clean(error)}`, { color: "red" })] : []),
    ],
  ];
  for (let i = start; i < Math.min(shown.length, start + rows); i++) {
    const e = shown[i]!;
    const base = i === index ? { inverse: true } : {};
    const color = eventColor(e);
    const { subject, text } = eventText(e, 300);
    lines.push([
      seg(` ${fit(String(e.runSeq), seqWidth, "right")} ${clock(e.time)} `, { ...base, color: MUTED }),
      seg(fit(e.type, typeWidth), { ...base, ...(color ? { color } : {}) }),
      seg(" ", base),
      seg(fit(subject ?? "", nodeWidth), { ...base, bold: true }),
      seg(" ", base),
      seg(text, base),
    ]);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
