import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { UsageError } from "./errors.js";
import { fileProblem, parseJsonText, readTextFile } from "../../engine/index.js";

export const CONFIG_FILE = "pitwall.config.json";
export const DEFAULT_STORE = "sqlite:./pitwall.db";

const configSchema = z
  .object({
    $schema: z.string().optional(),
    /** Store URL; a relative SQLite path is relative to the config file. */
    store: z.string().min(1).optional(),
    /** `process` or `os`: how writes are made durable (see the README's durability table). */
    durability: z.enum(["process", "os"]).optional(),
    /** Actions modules loaded by `worker`, `start`, `validate` and `demo` when no --actions is given. */
    actions: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
    /** Names of secrets, added to the default ones, whose values events and records people read never hold. */
    secretKeys: z.array(z.string().min(1)).optional(),
  })
  .strict();

export interface CliConfig {
  file: string | null;
  store?: string;
  durability?: "process" | "os";
  actions: string[];
  secretKeys: string[];
}

/**
 * Reads `--config FILE`, or `pitwall.config.json` in the working folder when it exists. Paths in
 * it are resolved against the file's folder, so a project's config works from anywhere.
 */
export function loadConfig(explicit: string | undefined, cwd = process.cwd()): CliConfig {
  const file = resolve(cwd, explicit ?? CONFIG_FILE);
  let text: string;
  try {
    text = readTextFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (explicit === undefined && code === "ENOENT") return { file: null, actions: [], secretKeys: [] };
    throw new UsageError(`config ${file}: cannot read it: ${fileProblem(error)}`);
  }
  const json = parseJsonText(text);
  if (json.error !== undefined) throw new UsageError(`config ${file} is not valid JSON: ${json.error}`);
  const parsed = configSchema.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `$.${issue.path.join(".")}` : "$";
    const what = issue.code === "unrecognized_keys" ? `unknown key ${issue.keys.join(", ")} (allowed: store, durability, actions, secretKeys)` : issue.message;
    throw new UsageError(`config ${file}: ${where}: ${what}`);
  }
  const dir = dirname(file);
  const actions = parsed.data.actions === undefined ? [] : ([] as string[]).concat(parsed.data.actions);
  return {
    file,
    ...(parsed.data.store ? { store: relativeTo(dir, parsed.data.store) } : {}),
    ...(parsed.data.durability ? { durability: parsed.data.durability } : {}),
    actions: actions.map((p) => resolve(dir, p)),
    secretKeys: parsed.data.secretKeys ?? [],
  };
}

/** `sqlite:./x.db` written in a config file means next to that file. */
function relativeTo(dir: string, url: string): string {
  const m = /^sqlite:(.*)$/.exec(url);
  if (!m || m[1] === "" || m[1] === ":memory:" || isAbsolute(m[1]!)) return url;
  return `sqlite:${resolve(dir, m[1]!)}`;
}
