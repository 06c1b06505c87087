import { useMemo } from "react";
import { END, describeNode, type TaskRecord, type WorkflowDefinition } from "../../../engine/index.js";
import { Lines, seg, type Line, type Seg } from "../components/lines.js";
import { drawLayers, type NodeLabel } from "../graph/draw.js";
import { layerGraph } from "../graph/layers.js";
import { loopNodes, nodeStates, type NodeState } from "../graph/node-states.js";
import { useServices, useSnapshot } from "../context.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { notHere, useRunActions } from "../hooks/use-run-actions.js";
import type { RunDetail } from "../hooks/use-run-detail.js";
import { PRIORITY } from "../key-router.js";
import { clean, span } from "../text.js";
import { ACCENT, MUTED, NODE_LOOK } from "../theme.js";
import { attemptsText } from "../../text/attempt-text.js";

function label(name: string, state: NodeState | undefined, inLoop: boolean, backEdges: { label: string | null; to: string }[], progress: number | undefined): NodeLabel {
  const look = NODE_LOOK[state?.status ?? "idle"];
  const mapped = state && state.tasks.length > 1 ? ` ${state.tasks.filter((t) => t.status === "succeeded").length}/${state.tasks.length}` : "";
  const visits = inLoop && state && state.visits > 0 ? ` ×${state.visits}` : "";
  const done = state?.status === "running" && progress !== undefined ? ` ${Math.round(progress * 100)}%` : "";
  const text = `${state?.current ? "▶" : ""}${look.glyph} ${clean(name)}${mapped}${visits}${done}${state?.breakpoint ? " ◉" : ""}`;
  const loop = backEdges.length > 0 ? ` ↺ ${backEdges.map((e) => `${e.label ? `${clean(e.label)}→` : "→"}${clean(e.to)}`).join(" ")}` : undefined;
  return { text, ...(loop ? { loop } : {}) };
}

const LEGEND: Line = [
  seg("✓ done ", { color: "green" }),
  seg("● running ", { color: "yellow" }),
  seg("◆ waiting ", { color: "magenta" }),
  seg("◷ timer ", { color: "blue" }),
  seg("✗ failed ", { color: "red" }),
  seg("↷ skip ", { color: MUTED }),
  seg("↯ caught ", { color: "yellow" }),
  seg("◌ next ○ idle ", { color: MUTED }),
  seg("⊘ cancel ", { color: MUTED, dim: true }),
  seg("▶ now ◉ break ", { color: MUTED }),
  seg("↺ loop", { color: "yellow" }),
];

/** The workflow drawn live: node status colours, route labels, loops, visits, the current nodes. */
export function GraphTab({ detail, definition, width, height }: { detail: RunDetail; definition: WorkflowDefinition; width: number; height: number }) {
  const layering = useMemo(() => layerGraph(definition), [definition]);
  const inLoop = useMemo(() => loopNodes(layering.edges), [layering]);
  const states = useMemo(() => nodeStates(detail, layering.nodes), [detail, layering]);
  const selectable = useMemo(() => layering.layers.flat().filter((n) => !layering.isDummy(n) && n !== END), [layering]);
  const { nav, ui } = useServices();
  const snap = useSnapshot();
  const [selectedName, setSelectedName] = useRemembered<string | undefined>("graph-node", undefined);
  // Unless one was chosen: the node that holds the run up (asking, failed, running, parked), else a current one.
  const holding = [...states].find(([, s]) => s.current && ["waiting", "failed", "running", "parked", "interrupted"].includes(s.status));
  const selectedIndex = Math.max(0, selectable.indexOf(selectedName ?? holding?.[0] ?? [...states].find(([, s]) => s.current)?.[0] ?? ""));
  const selected = selectable[selectedIndex];

  const screen = Math.max(20, width - 2);
  const drawing = useMemo(() => {
    const labels = new Map<string, NodeLabel>();
    for (const n of layering.nodes) {
      labels.set(n, label(n, states.get(n), inLoop.has(n), layering.edges.filter((e) => e.back && e.from === n), detail.progress.get(n)));
    }
    return drawLayers(layering, labels, screen);
  }, [layering, states, inLoop, screen, detail.progress]);

  const actions = useRunActions(detail, selected ? { node: selected } : {});
  // A sub-workflow node opens its child run: the one of its latest task.
  const childRun = useMemo(() => {
    if (!selected || definition.nodes[selected]?.kind !== "subgraph") return undefined;
    const tasks = new Set(detail.tasks.filter((t) => t.node === selected).map((t) => t.id));
    return [...snap.runs.values()].filter((r) => r.parentRunId === detail.run.id && r.parentTaskId !== null && tasks.has(r.parentTaskId)).sort((a, b) => b.createdAt - a.createdAt)[0];
  }, [selected, definition, detail, snap.runs]);
  // Any other node that ran opens its task: its attempts, and its model and tool calls.
  const ran = selected !== undefined && (states.get(selected)?.tasks.length ?? 0) > 0;
  useKeys(PRIORITY.pane, {
    open: childRun
      ? () => nav.push({ kind: "run", runId: childRun.id })
      : ran
        ? () => nav.push({ kind: "task", runId: detail.run.id, node: selected })
        : selected !== undefined && notHere(ui, `⏎: ${clean(selected)} has not run yet: its task opens here once it has`),
    ...listHandlers(selectable.length, selectedIndex, 5, (i) => setSelectedName(selectable[i])),
    kill: actions.kill,
    retry: actions.retry,
    retryEdited: actions.retryEdited,
    breakpoint: actions.breakpoint,
  });

  const footerRows = height >= 12 ? 3 : 1;
  const graphRows = Math.max(1, height - footerRows);
  const selectedRow = selected ? drawing.rowOf.get(selected) ?? 0 : 0;
  const start = useWindow(drawing.rows.length, selectedRow, graphRows);

  // A graph wider than the screen scrolls sideways to keep the selected node in the middle.
  const wide = drawing.width > screen;
  const left = wide ? Math.max(0, Math.min(drawing.width - screen, (drawing.columnOf.get(selected ?? "") ?? 0) - Math.floor(screen / 2))) : 0;
  const shown = wide ? drawing.window(left, screen) : drawing.rows;
  const lines: Line[] = shown.slice(start, start + graphRows).map((runs) => [
    seg(" "),
    ...runs.map((run): Seg => {
      if (run.part === "edge") return seg(run.text, { color: MUTED });
      if (run.part === "label") return seg(run.text, { color: ACCENT });
      if (run.part === "loop") return seg(run.text, { color: "yellow" });
      if (run.part !== "node" || !run.node) return seg(run.text);
      const state = states.get(run.node);
      const look = NODE_LOOK[state?.status ?? "idle"];
      return seg(run.text, { color: look.color, bold: state?.current ?? false, inverse: run.node === selected, ...(look.dim ? { dim: true } : {}) });
    }),
  ]);
  while (lines.length < graphRows) lines.push([]);
  if (footerRows === 3) lines.push(nodeDetail(selected, definition, states.get(selected ?? "")), LEGEND);
  lines.push(
    [
      seg(
        [
          drawing.rows.length > graphRows ? ` rows ${start + 1}-${Math.min(drawing.rows.length, start + graphRows)} of ${drawing.rows.length}` : "",
          wide ? ` ${left > 0 ? "◀ " : ""}columns ${left + 1}-${left + screen} of ${drawing.width}${left + screen < drawing.width ? " ▶" : ""}` : "",
          ` j/k select ${drawing.rows.length > graphRows || wide ? "nodes (the view follows)" : "a node"}`,
          childRun ? ` ⏎ opens its run ${childRun.id}` : ran ? ` ⏎ its task${callsOf(states.get(selected))}` : "",
        ]
          .filter(Boolean)
          .join(" ·"),
        { color: MUTED },
      ),
    ],
  );
  return <Lines lines={lines} width={width} height={height} />;
}

/** What `enter` shows of a node beside its task: its model and tool calls, counted. */
function callsOf(state: NodeState | undefined): string {
  const n = state?.calls.length ?? 0;
  return n === 0 ? "" : ` and its ${n} model/tool call${n === 1 ? "" : "s"}`;
}

/** What a parked node waits for: its timer's wake time, its sub-workflow run, or a signal. */
function parkedOn(tasks: readonly TaskRecord[]): string {
  const wait = tasks.find((t) => t.waitingFor && t.waitingFor.kind !== "interrupt")?.waitingFor;
  if (wait?.kind === "time") return `sleeping until ${new Date(wait.until).toISOString().slice(11, 19)} UTC`;
  if (wait?.kind === "run") return `waiting for its sub-workflow run ${wait.runId}`;
  if (wait?.kind === "signal") return `waiting for signal ${wait.name}`;
  return "parked";
}

/**
 * How long a node ran: its attempts' time, not the waits between them (backoffs, a pause after a
 * kill); with more than one, the last's (what `pitwall show` says of a task), and the wall time
 * from the first start to the last end when that reads otherwise.
 */
function timeText(tasks: readonly TaskRecord[], now: number): string {
  const timed = tasks.flatMap((t) => t.attempts.map((a) => ({ ...a, ms: (a.endedAt ?? (t.status === "running" ? now : a.startedAt)) - a.startedAt })));
  if (timed.length === 0) return "ran 0ms";
  const ran = span(timed.reduce((sum, a) => sum + a.ms, 0));
  const wall = span(Math.max(...timed.map((a) => a.startedAt + a.ms)) - Math.min(...timed.map((a) => a.startedAt)));
  const last = tasks.length === 1 && timed.length > 1 ? `last ${span(timed.at(-1)!.ms)}` : "";
  const over = wall !== ran ? `${wall} from first start to last end` : "";
  const more = [last, over].filter(Boolean).join("; ");
  return `ran ${ran}${more ? ` (${more})` : ""}`;
}

function nodeDetail(name: string | undefined, definition: WorkflowDefinition, state: NodeState | undefined): Line {
  if (!name) return [];
  const node = definition.nodes[name];
  const parts: Seg[] = [seg(` ${clean(name)}`, { bold: true })];
  const tasks = state?.tasks ?? [];
  if (tasks.length > 0) {
    const status = state!.status === "skipped" ? "skipped by an operator (it did not run)" : state!.status === "parked" ? parkedOn(tasks) : state!.status === "caught" ? "failed; its catch took the failure and the run went on" : state!.status;
    const items = tasks.length > 1 ? `${tasks.length} items, ` : "";
    parts.push(seg(` · step ${tasks[0]!.step}: ${status}, ${items}${attemptsText(tasks)}, ${timeText(tasks, Date.now())}`));
    const error = tasks.find((t) => t.error)?.error?.message;
    if (error && state!.status === "failed") parts.push(seg(` · ${clean(error)}`, { color: "red" }));
  } else parts.push(seg(" · has not run", { color: MUTED }));
  if (state?.interrupt) parts.push(seg(` · waiting: ${clean(state.interrupt.request.question ?? state.interrupt.kind)}`, { color: "magenta" }));
  // What the node is comes last: the first thing cut on a narrow screen.
  if (node) parts.push(seg(` — ${clean(describeNode(node))}`, { color: MUTED }));
  return parts;
}
