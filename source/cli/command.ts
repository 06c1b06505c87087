import type { AnyFlags, TypedFlags } from "./flags.js";
import { Operator, loadActionModules, openStore, storeUrlWarning, type ActionRegistry, type OwnerWaiting, type Store } from "../../engine/index.js";
import type { CliConfig } from "./config.js";
import { enableTypeScript } from "./typescript.js";
import { UsageError, type ExitCode } from "./errors.js";
import type { Output } from "./output.js";

/** The options every command shares (DESIGN: `--store`, `--json`, `--as`, `--config`, `--debug`). */
export interface GlobalOptions {
  /** Store URL from --store, PITWALL_STORE, the config file, or the default. */
  store: string;
  /** How writes are made durable (--durability, PITWALL_DURABILITY, the config file); the store's default when absent. */
  durability?: "process" | "os";
  json: boolean;
  /** `operator:<name>`, recorded on everything this invocation writes. */
  actor: string;
  debug: boolean;
  config: CliConfig;
  /** Names of secrets added to the default ones: the config file's `secretKeys` and PITWALL_SECRET_KEYS. */
  secretKeys: string[];
}

export interface CommandContext<F extends AnyFlags = AnyFlags> {
  /** Positional arguments after the command name. */
  args: string[];
  flags: Partial<TypedFlags<F>>;
  global: GlobalOptions;
  out: Output;
  /** Aborted on Ctrl-C or SIGTERM: long commands (worker, events --follow) stop cleanly. */
  signal: AbortSignal;
  /**
   * The store, opened on first use and closed when the command ends: read-only for a command
   * that `readsOnly`, unless `readOnly` says otherwise.
   */
  store(readOnly?: boolean): Promise<Store>;
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
  /**
   * Handles Ctrl-C and SIGTERM itself through `ctx.signal` (worker, events --follow), given its
   * flags; any other command is ended by the signal at once, even while it writes its output.
   */
  stopsOnSignal?: boolean | ((flags: Partial<TypedFlags<F>>) => boolean);
  /**
   * Runs user code (actions): the process exits when the command ends, so that a node that
   * ignored its abort signal (abandoned after the grace period) does not keep it alive.
   */
  exitsWhenDone?: boolean;
  /**
   * Only reads the store, so it opens it read-only: it works on a file it may not write and
   * never creates, upgrades or changes a store.
   */
  readsOnly?: boolean;
  /**
   * Creates a SQLite store that does not exist yet (start, worker, demo, console; signal
   * --start, given its flags). Every other command acts on what a store holds, so a mistyped
   * `--store` path is an error, not a new file.
   */
  createsStore?: boolean | ((flags: Partial<TypedFlags<F>>) => boolean);
  /**
   * Executes the runs it makes in this process, to their end (run, demo): the one kind of command
   * a `memory:` store works for. Any other would start from an empty store, or leave its writes
   * in one that is gone when it exits, so it refuses one.
   */
  inProcess?: boolean;
  run(ctx: CommandContext<F>): Promise<ExitCode | void>;
}

/** Whether `command`, given `flags`, stops cleanly on Ctrl-C through its signal. */
export function stopsOnSignal<F extends AnyFlags>(command: Command<F>, flags: Partial<TypedFlags<F>>): boolean {
  return typeof command.stopsOnSignal === "function" ? command.stopsOnSignal(flags) : (command.stopsOnSignal ?? false);
}

/** Whether `command`, given `flags`, creates a store that does not exist yet. */
export function createsStore<F extends AnyFlags>(command: Command<F>, flags: Partial<TypedFlags<F>>): boolean {
  return typeof command.createsStore === "function" ? command.createsStore(flags) : (command.createsStore ?? false);
}

/** Keeps each command's flag types attached to its `run`. */
export function defineCommand<const F extends AnyFlags>(command: Command<F>): Command<F> {
  return command;
}

export const CLOSE_WAIT_MS = 3000;

/** Opens the store and Operator lazily: `validate`, and `graph` of a file, never touch a store. */
export class Resources {
  /** The store opened writable (false) and read-only (true). */
  private readonly opened = new Map<boolean, Promise<Store>>();

  constructor(
    private readonly global: GlobalOptions,
    private readonly command: Pick<Command, "name" | "readsOnly" | "inProcess"> & { createsStore: boolean },
  ) {}

  store(readOnly = this.command.readsOnly ?? false): Promise<Store> {
    let opened = this.opened.get(readOnly);
    if (!opened) {
      if (!this.command.inProcess && isMemoryStore(this.global.store)) return Promise.reject(memoryRefused(this.command));
      const warning = storeUrlWarning(this.global.store);
      if (warning) this.warn(warning);
      opened = openStore(this.global.store, {
        readOnly,
        create: this.command.createsStore,
        ...(this.global.durability ? { durability: this.global.durability } : {}),
        onWarning: (message) => this.warn(message),
      });
      this.opened.set(readOnly, opened);
      this.pending++;
      const settled = () => void this.pending--;
      opened.then(settled, settled);
    }
    return opened;
  }

  /** How many stores are still being opened. */
  private pending = 0;

  /** Whether a store is still being opened (a Redis that does not answer holds it up to its connect timeout). */
  get opening(): boolean {
    return this.pending > 0;
  }

  /** What a store says as it opens, on stderr, once even when it is opened twice (writable and read-only). */
  private warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    process.stderr.write(`warning: ${message}\n`);
  }

  private readonly warned = new Set<string>();

  async operator(): Promise<Operator> {
    return new Operator(await this.store(), {
      actor: this.global.actor,
      secretKeys: this.global.secretKeys,
      // A person waiting on a worker that may be dead is told why nothing happens (not scripts: stderr stays one JSON error).
      ...(this.global.json ? {} : { onWaiting: (w) => process.stderr.write(`${waitingNote(w)}\n`) }),
    });
  }

  async actions(fromFlags: readonly string[] | undefined): Promise<ActionRegistry | undefined> {
    const fromConfig = !(fromFlags && fromFlags.length > 0);
    const paths = fromConfig ? this.global.config.actions : fromFlags;
    if (paths.length === 0) return undefined;
    // A config file found in the working folder runs code: say whose, so that it is never a surprise.
    if (fromConfig && !this.global.json) process.stderr.write(`config ${this.global.config.file}: loading its actions ${paths.join(", ")}\n`);
    await enableTypeScript(paths);
    return loadActionModules(paths);
  }

  /**
   * Closes the store, waiting at most `waitMs`: a store that no longer answers (Redis gone
   * away) must not keep a finished command — or a console the operator quit — hanging.
   * Resolves false when it gave up waiting.
   */
  async close(waitMs = CLOSE_WAIT_MS): Promise<boolean> {
    const stores = (await Promise.all([...this.opened.values()].map((opened) => opened.catch(() => undefined)))).filter((s) => s !== undefined);
    if (stores.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    try {
      return await Promise.race([Promise.all(stores.map((s) => s.close().catch(() => undefined))).then(() => true), gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Whether a store URL names a store in this process's memory (as openStore spells one). */
export function isMemoryStore(url: string): boolean {
  return /^memory:?$/.test(url);
}

function memoryRefused(command: Pick<Command, "name"> & { createsStore: boolean }): UsageError {
  const why = command.createsStore
    ? `what pitwall ${command.name} writes there would be gone when it exits, unseen by any other pitwall process`
    : `pitwall ${command.name} would find it empty: no other process can have put anything there`;
  return new UsageError(
    `--store memory: lives only as long as the process that opens it, so ${why}; use a SQLite file (sqlite:./pitwall.db, the default) or Redis (redis://host:6379/0), or pitwall run FILE to run a workflow to its end in one process`,
  );
}

/**
 * What a command waiting on a run's owner says while it waits: that the worker may be gone only
 * when its lease shows it did not renew it in time.
 */
export function waitingNote({ runId, owner, leaseUntil, worker, stopping }: OwnerWaiting): string {
  if (stopping.length > 0) return `run ${runId}: ${owner} is stopping ${stopping.join(", ")} (a node that ignores its signal is abandoned after the grace period)`;
  if (worker !== "not-renewing" || leaseUntil === null) return `run ${runId} is held by ${owner}: waiting for it to take the command`;
  const left = Math.max(0, Math.ceil((leaseUntil - Date.now()) / 1000));
  return `run ${runId} is held by ${owner}, which has not renewed its lease: if it is gone, the lease runs out in ${left} s and the command is applied here`;
}
