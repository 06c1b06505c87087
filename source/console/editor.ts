import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { editorFailure, type EditorCommand } from "../text/editor-command.js";

export type EditResult = { status: "saved"; text: string } | { status: "unchanged" } | { status: "failed"; message: string };

/** Opens text in the operator's editor and returns what was saved. */
export interface Editor {
  edit(text: string, name: string): EditResult;
}

/** Hands the terminal to a child program and takes it back afterwards (raw mode, screen, cursor). */
export type Suspend = <T>(fn: () => T) => T;

/**
 * The chosen editor (`chosenEditor`: `$VISUAL`, `$EDITOR` or `vi`; a command alone is said to come
 * from `$EDITOR`), run through the shell as git does (so `EDITOR="code -w"` works), on a private
 * temporary file that is removed afterwards.
 */
export function systemEditor(chosen: EditorCommand | string, suspend: Suspend): Editor {
  const choice = typeof chosen === "string" ? { command: chosen, from: "$EDITOR" } : chosen;
  const editor = choice.command;
  return {
    edit(text, name) {
      const dir = mkdtempSync(join(tmpdir(), "pitwall-edit-"));
      const file = join(dir, `${name.replace(/[^\w.-]/g, "_")}.json`);
      try {
        writeFileSync(file, text, { mode: 0o600 });
        const result = suspend(() => spawnSync("/bin/sh", ["-c", `${editor} "$1"`, editor, file], { stdio: "inherit" }));
        if (result.error) return { status: "failed", message: `cannot run editor "${editor}": ${result.error.message}` };
        if (result.status !== 0) return { status: "failed", message: `${editorFailure(choice, result.status, result.signal)}; nothing sent` };
        const saved = readFileSync(file, "utf8");
        return saved === text ? { status: "unchanged" } : { status: "saved", text: saved };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
