import { useEffect, useMemo, useState } from "react";
import { editPatch, errorMessage, readState, type RunRecord, type State } from "../../../engine/index.js";
import { Lines, highlight, seg, type Line } from "../components/lines.js";
import { useServices } from "../context.js";
import { rereadState, stateValidation, useEditState } from "../hooks/use-edit-state.js";
import { useKeys } from "../hooks/use-keys.js";
import { notHere } from "../hooks/use-run-actions.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import type { RunDetail } from "../hooks/use-run-detail.js";
import { PRIORITY } from "../key-router.js";
import { clean, displayWidth, truncate } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";
import { jsonLines } from "./json-lines.js";
import { treeRows } from "./json-tree.js";

/** The state at a checkpoint, read again when the checkpoint changes. */
export function useStateAt(runId: string, n: number): { state?: State; error?: string } {
  const { store } = useServices();
  const [result, setResult] = useState<{ state?: State; error?: string; n?: number }>({});
  useEffect(() => {
    let alive = true;
    readState(store, runId, n).then(
      (state) => alive && setResult({ state, n }),
      (error: unknown) => alive && setResult({ error: errorMessage(error) }),
    );
    return () => {
      alive = false;
    };
  }, [store, runId, n]);
  return result;
}

/** Why the state of `run` cannot be edited now, and what to do instead. */
function whyNotEditable(run: RunRecord, defined: boolean): string {
  if (run.status === "running") return `run ${run.id} is running: its state is edited while it is paused — set a breakpoint (b in the graph) or kill its task (ctrl-k) first`;
  if (run.status === "succeeded" || run.status === "canceled") return `run ${run.id} has ended (${run.status}): E in Checkpoints forks it with its state edited`;
  if (!defined) return `the workflow version ${run.version} of run ${run.id} is not in the store: its state cannot be checked`;
  return "the state is still being read; press e again in a moment";
}

/** The run's current state as a folded JSON tree; long values open whole with `enter`; `e` edits. */
export function StateTab({ detail, width, height }: { detail: RunDetail; width: number; height: number }) {
  const { nav, operator, store, ui } = useServices();
  const { run, definition } = detail;
  const { state, error } = useStateAt(run.id, run.headN);
  const [toggled, setToggled] = useRemembered<ReadonlySet<string>>("state-toggled", new Set());
  const [picked, setPicked] = useRemembered("state-selected", 0);
  const valueWidth = Math.max(10, width - 30);
  const { rows, cut } = useMemo(() => (state ? treeRows(state, toggled, valueWidth) : { rows: [], cut: false }), [state, toggled, valueWidth]);
  const index = Math.min(picked, Math.max(0, rows.length - 1));
  const selected = rows[index];
  const listRows = Math.max(1, height - 1);
  const start = useWindow(rows.length, index, listRows);
  const edit = useEditState();
  const flip = (path: string) =>
    setToggled((t) => {
      const next = new Set(t);
      if (!next.delete(path)) next.add(path);
      return next;
    });
  const editable = operator && state && definition && (run.status === "paused" || run.status === "queued" || run.status === "failed");

  useKeys(PRIORITY.pane, {
    ...listHandlers(rows.length, index, listRows, setPicked),
    toggle: selected?.container && (() => flip(selected.path)),
    fold: selected?.container && selected.open && (() => flip(selected.path)),
    unfold: selected?.container && !selected.open && (() => flip(selected.path)),
    open:
      selected &&
      (() => (selected.container && !selected.long ? flip(selected.path) : nav.push({ kind: "text", title: `${clean(selected.path)} at checkpoint ${run.headN}`, lines: jsonLines(selected.value, width) }))),
    edit:
      (editable &&
      edit &&
      (() =>
        edit({
          what: `Editing the state of run ${run.id} (${run.workflow})`,
          at: run.headN,
          value: state!,
          validate: stateValidation(definition!),
          action: "Apply edit",
          runId: run.id,
          send: async (edited, reason, base) => (await operator!.updateState(run.id, editPatch(base, edited), reason ? { reason } : {})).effect,
          reread: () => rereadState(store, run.id),
        }))) ||
      (operator !== null && notHere(ui, `e: ${whyNotEditable(run, definition !== undefined)}`)),
  });

  const lines: Line[] = [[seg(` state at checkpoint ${run.headN} (step ${run.step})`, { bold: true }), seg(`  ${rows.length} rows · enter opens · space folds${editable ? " · e edits" : ""}`, { color: MUTED }),
    ...(cut ? [seg("  too big to unfold whole: fold a large key to see inside the others", { color: "yellow" })] : []),
  ]];
  if (error) lines.push([seg(` ✗ ${clean(error)}`, { color: "red" })]);
  else if (!state) lines.push([seg(" reading the state…", { color: MUTED })]);
  for (let i = start; i < Math.min(rows.length, start + listRows); i++) {
    const row = rows[i]!;
    const marker = row.container ? (row.open ? "▾ " : "▸ ") : "  ";
    const lead = `${"  ".repeat(row.depth + 1)}${marker}`;
    const key = clean(row.key);
    const whole = row.long ? "  ⏎ whole" : "";
    const room = Math.max(8, width - displayWidth(lead) - displayWidth(key) - 2 - whole.length);
    const line: Line = [
      seg(lead, { color: MUTED }),
      seg(key, { color: ACCENT }),
      seg(": ", { color: MUTED }),
      seg(truncate(row.text, room), row.container ? { color: MUTED } : {}),
      seg(whole, { color: MUTED }),
    ];
    lines.push(i === index ? highlight(line, width) : line);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
