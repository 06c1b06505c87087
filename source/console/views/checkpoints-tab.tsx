import { useMemo } from "react";
import { diffCheckpoints, editPatch, readState, type CheckpointSummary } from "../../../engine/index.js";
import { Lines, highlight, seg, type Line } from "../components/lines.js";
import { act, useServices } from "../context.js";
import { stateValidation, useEditState } from "../hooks/use-edit-state.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import type { RunDetail } from "../hooks/use-run-detail.js";
import { PRIORITY } from "../key-router.js";
import { bytes, clean, clock, fit } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";
import { checkpointNodes, skippedByStep } from "../../text/checkpoint-nodes.js";
import { SIDE_BY_SIDE_WIDTH, diffLines, sideBySideLines } from "./diff-lines.js";

/** Marks a checkpoint that stores a snapshot (the whole state), not only its step's delta. */
const SNAPSHOT = "■";

const SOURCE_COLOR: Record<CheckpointSummary["source"], string> = { input: "blue", loop: "white", update: "yellow", fork: "magenta" };

/** Every checkpoint of the run: `enter` diffs one against its parent, `space` marks for `d` (two, or one and the selected), `F` forks. */
export function CheckpointsTab({ detail, width, height }: { detail: RunDetail; width: number; height: number }) {
  const { store, nav, ui, operator } = useServices();
  const { run, checkpoints } = detail;
  const [picked, setPicked] = useRemembered<number | undefined>("checkpoint-selected", undefined);
  const [marked, setMarked] = useRemembered<number[]>("checkpoint-marks", []);
  const index = Math.min(picked ?? checkpoints.length - 1, checkpoints.length - 1);
  const selected = checkpoints[index];
  const rows = Math.max(1, height - 2);
  const start = useWindow(checkpoints.length, Math.max(0, index), rows);
  const edit = useEditState();

  const showDiff = async (from: Labelled | null, to: Labelled, title: string) => {
    ui.report({ tone: "busy", text: `reading checkpoints ${from?.n ?? "∅"} and ${to.n}…` });
    try {
      const diff = await diffCheckpoints(store, from, to);
      ui.report(undefined);
      // Side by side where the screen has room for two values, else one change a line.
      const lines = width >= SIDE_BY_SIDE_WIDTH ? sideBySideLines(diff, width, from ? checkpointLabel(from, run.id) : "(the input)", checkpointLabel(to, run.id)) : diffLines(diff);
      nav.push({ kind: "text", title, lines });
    } catch (error) {
      ui.report({ tone: "error", text: clean(String(error)) });
    }
  };
  const byId = (id: string | null) => (id ? checkpoints.find((c) => c.id === id) ?? null : null);

  useKeys(PRIORITY.pane, {
    ...listHandlers(checkpoints.length, index, rows, setPicked),
    open:
      selected &&
      (async () => {
        // A fork's first checkpoint has its parent in the source run.
        const parent = byId(selected.parentId) ?? (selected.parentId ? ((await store.getCheckpoint(selected.parentId)) ?? null) : null);
        const name = parent ? (parent.runId === run.id ? String(parent.n) : parent.id) : "(none: the input)";
        await showDiff(parent, selected, `checkpoint ${selected.n} against its parent ${name}`);
      }),
    mark: selected && (() => setMarked((m) => (m.includes(selected.n) ? m.filter((n) => n !== selected.n) : [...m, selected.n].slice(-2)))),
    // Two marked are compared; one marked, with the selected one. Otherwise `d` says what is missing.
    diff:
      selected &&
      (() => {
        const pair = marked.length === 2 ? marked : marked.length === 1 && marked[0] !== selected.n ? [marked[0]!, selected.n] : undefined;
        if (!pair) {
          const text = marked.length === 0 ? "mark a checkpoint with space, then d diffs it with the selected one" : `select another checkpoint to diff with ${marked[0]} (or mark a second with space)`;
          return ui.report({ tone: "info", text });
        }
        const [a, b] = [...pair].sort((x, y) => x - y).map((n) => checkpoints.find((c) => c.n === n)!);
        return showDiff(a!, b!, `checkpoint ${a!.n} → ${b!.n}`);
      }),
    fork:
      operator &&
      selected &&
      (async () => {
        const answer = await ui.confirm({
          title: `Fork run ${run.id} from checkpoint ${selected.n} (step ${selected.step})?`,
          body: [
            [seg("A new run starts from this checkpoint's state; this run's history is not changed.", { color: MUTED })],
            [seg("It carries the signals this run took after the checkpoint, or holds untaken (pitwall fork --no-signals does not).", { color: MUTED })],
          ],
          action: "Fork",
          reason: "optional",
        });
        if (!answer.ok) return ui.report({ tone: "info", text: "fork not confirmed; nothing sent" });
        let forked: string | undefined;
        await act(ui, `fork from checkpoint ${selected.n}`, async () => {
          const outcome = await operator.fork(run.id, selected.n, answer.reason ? { reason: answer.reason } : {});
          forked = outcome.result.runId as string;
          return `${outcome.effect}`;
        });
        if (forked) nav.push({ kind: "run", runId: forked });
      }),
    forkEdited:
      operator &&
      edit &&
      selected &&
      detail.definition &&
      (async () => {
        const state = await readState(store, run.id, selected.n);
        let forked: string | undefined;
        await edit({
          what: `Forking run ${run.id} from checkpoint ${selected.n} (step ${selected.step}) with this state; this run's history is not changed`,
          value: state,
          validate: stateValidation(detail.definition!),
          action: "Fork",
          send: async (edited, reason) => {
            const outcome = await operator.fork(run.id, selected.n, { patch: editPatch(state, edited), ...(reason ? { reason } : {}) });
            forked = outcome.result.runId as string;
            return outcome.effect;
          },
        });
        if (forked) nav.push({ kind: "run", runId: forked });
      }),
  });

  const c = { n: 4, step: 5, source: 7, actor: Math.min(22, Math.max(10, Math.floor(width / 5))), time: 8, size: 9 };
  const nodesWidth = Math.max(6, width - (c.n + c.step + c.source + c.actor + c.time + c.size + 10));
  const skipped = useMemo(() => skippedByStep(detail.tasks), [detail.tasks]);
  const lines: Line[] = [
    [seg(` ${checkpoints.length} checkpoints`, { bold: true }), seg(`  enter diff with parent · space mark${marked.length ? ` (${marked.join(", ")})` : ""} · d diff marked · ${SNAPSHOT} snapshot`, { color: MUTED })],
    [seg(`   ${fit("#", c.n, "right")} ${fit("STEP", c.step, "right")} ${fit("SOURCE", c.source)} ${fit("ACTOR", c.actor)} ${fit("NODES", nodesWidth)} ${fit("TIME", c.time)} ${fit("SIZE", c.size, "right")}`, { color: MUTED, bold: true })],
  ];
  for (let i = start; i < Math.min(checkpoints.length, start + rows); i++) {
    const cp = checkpoints[i]!;
    const line: Line = [
      seg(marked.includes(cp.n) ? " ◆ " : "   ", { color: ACCENT }),
      seg(`${fit(String(cp.n), c.n, "right")} ${fit(String(cp.step), c.step, "right")} `),
      seg(fit(cp.source, c.source), { color: SOURCE_COLOR[cp.source] }),
      seg(` ${fit(clean(cp.actor), c.actor)} `, { color: MUTED }),
      seg(fit(clean(checkpointNodes(cp, skipped).join(", ")), nodesWidth)),
      seg(` ${fit(clock(cp.createdAt), c.time)} ${fit(`${cp.hasSnapshot ? `${SNAPSHOT} ` : ""}${bytes(cp.bytes)}`, c.size, "right")}`, { color: MUTED }),
    ];
    lines.push(i === index ? highlight(line, width) : line);
  }
  return <Lines lines={lines} width={width} height={height} />;
}

type Labelled = Pick<CheckpointSummary, "id" | "runId" | "n" | "step" | "source" | "actor">;

/** A checkpoint as a column heading: `checkpoint 3 · step 2 · update by operator:ann`. */
function checkpointLabel(c: Labelled, runId: string): string {
  return `${c.runId === runId ? `checkpoint ${c.n}` : c.id} · step ${c.step} · ${c.source} by ${c.actor}`;
}
