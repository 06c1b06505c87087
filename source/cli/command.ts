import type { AnyFlags, TypedFlags } from "meow";
import { Operator, loadActionModules, openStore, type ActionRegistry, type Store } from "../../engine/index.js";
import type { CliConfig } from "./config.js";
import { enableTypeScript } from "./typescript.js";
import type { ExitCode } from "./errors.js";
import type { Output } from "./output.js";

/** The options every command shares (DESIGN: `--store`, `--json`, `--as`, `--config`, `--debug`). */
export interface GlobalOptions {
  /** Store URL from --store, PITWALL_STORE, the config file, or the default. */
  store: string;
  json: boolean;
  /** `operator:<name>`, recorded on everything this invocation writes. */
  actor: string;
  debug: boolean;
  config: CliConfig;
}

export interface CommandContext<F extends AnyFlags = AnyFlags> {
  /** Positional arguments after the command name. */
  args: string[];
  flags: Partial<TypedFlags<F>>;
  global: GlobalOptions;
  out: Output;
  /** Aborted on Ctrl-C or SIGTERM: long commands (worker, events --follow) stop cleanly. */
  signal: AbortSignal;
  /** The store, opened on first use and closed when the command ends. */
  store(): Promise<Store>;
  operator(): Promise<Operator>;
  /** The actions modules named by `--actions`, else those of the config file. */
  actions(fromFlags: readonly string[] | undefined): Promise<ActionRegistry | undefined>;
}

export interface Command<F extends AnyFlags = AnyFlags> {
  name: string;
  /** `resolve <interrupt> (--approve | --reject ...)`, without the program name. */
  usage: string;
  summary: string;
  /** Paragraphs shown by `pitwall <command> --help` under the usage line. */
  details?: string;
  flags: F;
  /** How many positional arguments it takes. */
  args: { min: number; max: number };
  /** Handles Ctrl-C itself through `ctx.signal` (worker, events --follow); others exit at once. */
  stopsOnSignal?: boolean;
  run(ctx: CommandContext<F>): Promise<ExitCode | void>;
}

/** Keeps each command's flag types attached to its `run`. */
export function defineCommand<const F extends AnyFlags>(command: Command<F>): Command<F> {
  return command;
}

export const CLOSE_WAIT_MS = 3000;

/** Opens the store and Operator lazily: `validate` and `graph` never touch a store. */
export class Resources {
  private opened: Promise<Store> | undefined;

  constructor(private readonly global: GlobalOptions) {}

  store(): Promise<Store> {
    this.opened ??= openStore(this.global.store);
    return this.opened;
  }

  async operator(): Promise<Operator> {
    return new Operator(await this.store(), { actor: this.global.actor });
  }

  async actions(fromFlags: readonly string[] | undefined): Promise<ActionRegistry | undefined> {
    const paths = fromFlags && fromFlags.length > 0 ? fromFlags : this.global.config.actions;
    if (paths.length === 0) return undefined;
    await enableTypeScript(paths);
    return loadActionModules(paths);
  }

  /**
   * Closes the store, waiting at most `waitMs`: a store that no longer answers (Redis gone
   * away) must not keep a finished command — or a console the operator quit — hanging.
   * Resolves false when it gave up waiting.
   */
  async close(waitMs = CLOSE_WAIT_MS): Promise<boolean> {
    if (!this.opened) return true;
    const store = await this.opened.catch(() => undefined);
    if (!store) return true;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    try {
      return await Promise.race([store.close().then(() => true, () => true), gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }
}
