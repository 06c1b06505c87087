import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { UsageError, describeError } from "./errors.js";
import { chosenEditor, editorFailure } from "../text/editor-command.js";
import { withoutCommentLines } from "../text/plain.js";
import { parseJsonText } from "../../engine/index.js";

export interface EditOptions<T> {
  value: unknown;
  /** The temporary file's name, which editors show in their title: what is edited (`state.json`, `arguments.json`). */
  fileName: string;
  /** Lines explaining what is being edited, shown as `//` comments at the top of the file. */
  header: string[];
  /**
   * Applies the saved value, edited from `base` (the value the file was opened on); errors
   * `retry` accepts reopen the editor with the error on top.
   */
  apply(edited: unknown, base: unknown): Promise<T>;
  retry(error: unknown): boolean;
  /**
   * For an error that says the value changed meanwhile (another operator's edit): the value as it
   * is now, which the editor reopens on (your change is to be made again on it).
   */
  reread?(error: unknown): Promise<unknown> | undefined;
}

export type EditResult<T> = { kind: "applied"; result: T } | { kind: "unchanged" };

/**
 * `kubectl edit` for JSON: opens $VISUAL or $EDITOR on the value, applies what is saved, and on
 * an invalid document or a refused edit reopens the editor with the error at the top. Saving an
 * empty file, or the value unchanged, changes nothing; saving again after an error without
 * changing anything gives up with that error.
 */
export async function editJson<T>(options: EditOptions<T>): Promise<EditResult<T>> {
  const chosen = chosenEditor();
  const editor = chosen.command;
  if (editor === "vi" && !(process.stdin.isTTY && process.stdout.isTTY)) {
    throw new UsageError("the editor would be vi, which needs a terminal: run this in one, or set $VISUAL or $EDITOR to an editor command; nothing was changed");
  }
  // Loaded by the commands that open an editor, not by every command at its start.
  const { spawnSync } = await import("node:child_process");
  const dir = mkdtempSync(join(tmpdir(), "pitwall-edit-"));
  const file = join(dir, options.fileName);
  let base = options.value;
  let body = JSON.stringify(base, null, 2);
  let problem: string | undefined;
  /** The refusal `problem` says, kept so that giving up reports it as what it is (a VALIDATION error with its issues, say). */
  let refusal: Error | undefined;
  try {
    for (;;) {
      const shown = [...options.header, ...(problem ? ["", `ERROR: ${problem}`, "Fix it and save, or save an empty file to cancel."] : [])];
      writeFileSync(file, `${shown.map((l) => (l ? `// ${l}` : "//")).join("\n")}\n${body}\n`, { mode: 0o600 });
      const ran = spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" });
      if (ran.error || ran.status !== 0) {
        throw new UsageError(`${ran.error ? `editor "${editor}" could not start: ${ran.error.message}` : editorFailure(chosen, ran.status, ran.signal)}; nothing was changed`);
      }
      const text = readFileSync(file, "utf8");
      const saved = withoutCommentLines(text);
      if (saved.trim() === "") return { kind: "unchanged" };
      const givenUp = problem !== undefined && saved.trim() === body.trim();
      body = saved.trim();
      // Parsed with its comments, so that an error's line and column are those of the file as saved
      // this time (the reopened file has the error lines on top, which the last save did not).
      const parsed = parseJsonText(text, { comments: true });
      if (parsed.error !== undefined) {
        problem = `not valid JSON at ${parsed.error}`;
        refusal = undefined;
      }
      if (givenUp) {
        const given = `${problem} (the file was saved unchanged; nothing was applied)`;
        if (!refusal) throw new UsageError(given);
        refusal.message = given;
        throw refusal;
      }
      if (parsed.error !== undefined) continue;
      const edited = parsed.value;
      if (isDeepStrictEqual(edited, base)) return { kind: "unchanged" };
      try {
        return { kind: "applied", result: await options.apply(edited, base) };
      } catch (error) {
        if (!options.retry(error)) throw error;
        problem = describeError(error);
        refusal = error instanceof Error ? error : undefined;
        const now = await options.reread?.(error);
        if (now !== undefined) {
          base = now;
          body = JSON.stringify(base, null, 2);
          problem = `${problem}; someone changed the state meanwhile: this is the state now, make your change again`;
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
