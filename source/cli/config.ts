import { dirname, isAbsolute, resolve } from "node:path";
import { UsageError } from "./errors.js";
import { ValidationError, checkJson, fileProblem, parseJsonText, readTextFile } from "../../engine/index.js";

export const CONFIG_FILE = "pitwall.config.json";
export const DEFAULT_STORE = "sqlite:./pitwall.db";

/**
 * What a config file may hold, as JSON Schema (checked by the engine's `checkJson`, which builds
 * its validator only when a file is read: a command without a config file never loads zod).
 */
const CONFIG_SCHEMA = {
  type: "object",
  properties: {
    $schema: { type: "string" },
    /** Store URL; a relative SQLite path is relative to the config file. */
    store: { type: "string", minLength: 1 },
    /** `process` or `os`: how writes are made durable (see the README's durability table). */
    durability: { enum: ["process", "os"] },
    /** Actions modules loaded by `worker`, `start`, `validate` and `demo` when no --actions is given. */
    actions: { anyOf: [{ type: "string", minLength: 1 }, { type: "array", items: { type: "string", minLength: 1 } }] },
    /** Names of secrets, added to the default ones, whose values events and records people read never hold. */
    secretKeys: { type: "array", items: { type: "string", minLength: 1 } },
  },
} as const;

type ConfigFile = { $schema?: string; store?: string; durability?: "process" | "os"; actions?: string | string[]; secretKeys?: string[] };

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
  const data = checkedConfig(json.value, file);
  const dir = dirname(file);
  const actions = data.actions === undefined ? [] : ([] as string[]).concat(data.actions);
  return {
    file,
    ...(data.store ? { store: relativeTo(dir, data.store) } : {}),
    ...(data.durability ? { durability: data.durability } : {}),
    actions: actions.map((p) => resolve(dir, p)),
    secretKeys: data.secretKeys ?? [],
  };
}

/** `sqlite:./x.db` written in a config file means next to that file. */
function relativeTo(dir: string, url: string): string {
  const m = /^sqlite:(.*)$/.exec(url);
  if (!m || m[1] === "" || m[1] === ":memory:" || isAbsolute(m[1]!)) return url;
  return `sqlite:${resolve(dir, m[1]!)}`;
}

/** The file's settings, or a UsageError naming the first thing wrong in them and where. */
function checkedConfig(value: unknown, file: string): ConfigFile {
  const allowed = Object.keys(CONFIG_SCHEMA.properties).filter((key) => key !== "$schema");
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`config ${file}: $: expected an object of ${allowed.join(", ")}`);
  const unknown = Object.keys(value).filter((key) => !Object.hasOwn(CONFIG_SCHEMA.properties, key));
  if (unknown.length > 0) throw new UsageError(`config ${file}: $: unknown key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (allowed: ${allowed.join(", ")})`);
  try {
    return checkJson(CONFIG_SCHEMA, value, "config") as ConfigFile;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const issue = error.issues[0];
    throw new UsageError(`config ${file}: ${issue ? `${issue.path}: ${issue.message}` : error.message}`);
  }
}
