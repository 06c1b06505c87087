import { Redis, type RedisOptions } from "ioredis";
import { StoreError, ValidationError, errorMessage } from "../../errors.js";
import { describeStoreUrl, withColon } from "../open.js";
import { connectionDown, failureContext, knownFailure, quietIoredis } from "./failures.js";
import { timeCommands } from "./silence.js";
import { alertReason } from "./tls-alerts.js";
import { TLS_PARAMETERS, connectHint, tlsOptions } from "./tls.js";

export interface RedisStoreOptions {
  /** Prefix of every key (default `pitwall:`); several stores can share one database. */
  prefix?: string;
  /** Opening writes nothing (a new store's layout marker is left for the first writer to set). */
  readOnly?: boolean;
  /** False: no store under the prefix (no layout marker) is an error instead of a new store. */
  create?: boolean;
  /**
   * How many of the most recent events the store-wide stream keeps (default 100 000; 0 keeps all).
   * It never drops an event of a run that has not ended, and each run's own stream keeps all of
   * that run's events.
   */
  eventRetention?: number;
  /**
   * `process` (default): a commit is acknowledged once Redis has applied it; surviving a Redis
   * crash is up to the server's persistence (AOF `everysec` loses up to about a second).
   * `os`: a commit is acknowledged once it is fsynced to the server's disk (WAITAOF on Redis 7.2
   * and later; on older servers only with `appendonly yes` and `appendfsync always`).
   */
  durability?: "process" | "os";
  /**
   * How long to wait for the server when connecting (default 3000 ms; the URL's `connect_timeout`,
   * in seconds): long enough for a lost SYN to be sent again (after 1 s) and a TLS handshake far away.
   */
  connectTimeoutMs?: number;
  /**
   * How long a command waits for its reply (default 3000 ms; the URL's `command_timeout`, in
   * seconds). A server that stops answering but keeps the connection open (frozen, or behind a
   * partition that never resets it) fails the command then, as one line, instead of holding a
   * command-line tool, the console or a worker silently, and the connection is made again. A
   * worker tries again (commits and claims are applied once), and a renewal that timed out still
   * reaches the server when it answers again: a lease runs out only after a silence as long as
   * it, and a server or a process held for a second fails nothing.
   */
  commandTimeoutMs?: number;
  /**
   * How often a writer reads the server's `maxmemory-policy` again (default 10 000 ms): one
   * changed to evict keys makes every later write fail until it is changed back.
   */
  policyCheckMs?: number;
  /** Hears what is worth saying about a server that is used all the same (see `OpenStoreOptions`). */
  onWarning?: (message: string) => void;
}

export interface RedisTarget {
  /** The URL without a password, for messages. */
  description: string;
  options: RedisOptions;
  prefix: string;
  eventRetention: number;
  commandTimeoutMs: number;
}

const DEFAULT_RETENTION = 100_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 3_000;
/** Idle time before TCP keepalive probes a connection (then, by Node's settings, every second, 10 times). */
const KEEPALIVE_MS = 5_000;

/** How special characters are written in a URL's user and password. */
const ENCODE_HINT = 'percent-encode special characters in the user and password (% as %25, # as %23, / as %2F, ? as %3F, @ as %40, : in the user as %3A, a space as %20)';

/** The query parameters a store URL may have; any other is refused. */
const URL_PARAMETERS = ["prefix", "retention", "connect_timeout", "command_timeout", ...Object.keys(TLS_PARAMETERS)];

/**
 * Reads `redis://[user[:password]@]host[:port][/db][?prefix=...&retention=...]` (and `rediss://`
 * for TLS, which also takes `tls_ca`, `tls_cert` and `tls_key`: files read now), with
 * `connect_timeout` and `command_timeout` in seconds. Options given in code win over the URL's.
 */
export function parseRedisUrl(url: string, options: RedisStoreOptions = {}): RedisTarget {
  const description = describeStoreUrl(url);
  // A "#", "/" or "?" in a password ends the user information early: the rest of it would be read
  // as the host, the database, a parameter or a fragment (so none of those may hold an "@").
  const breaking = /[#\s]/.exec(url)?.[0] ?? (/^[a-z]+:\/\/[^/?]*[/?][\s\S]*@/i.test(url) ? "@ after a / or ?" : undefined);
  if (breaking !== undefined) {
    throw new ValidationError(`store URL ${description} holds ${breaking === "@ after a / or ?" ? 'an "@" after a "/" or "?"' : JSON.stringify(breaking)}, which a URL cannot hold there: ${ENCODE_HINT}`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError(`store URL ${description} is not a valid URL: use redis://[user:password@]host[:port][/db]; ${ENCODE_HINT}`);
  }
  const bad = (problem: string) => new ValidationError(`store URL ${withColon(description)} ${problem}`);
  const decoded = (part: string, what: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw bad(`its ${what} has a "%" not followed by two hex digits: ${ENCODE_HINT}`);
    }
  };
  const username = parsed.username ? decoded(parsed.username, "user") : undefined;
  const password = parsed.password ? decoded(parsed.password, "password") : undefined;
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) throw bad(`the database must be a number, not "${db}"`);
  // A mistyped parameter would silently give the default: another namespace, another retention;
  // one given twice would leave which one counts to chance.
  const names = [...parsed.searchParams.keys()];
  const unknown = names.find((key) => !URL_PARAMETERS.includes(key));
  if (unknown !== undefined) throw bad(`unknown parameter "${unknown}" (known: ${URL_PARAMETERS.join(", ")})`);
  const twice = names.find((key, i) => names.indexOf(key) !== i);
  if (twice !== undefined) throw bad(`"${twice}" is given more than once: give each parameter once`);
  const retentionText = parsed.searchParams.get("retention");
  const eventRetention = options.eventRetention ?? (retentionText === null ? DEFAULT_RETENTION : Number(retentionText));
  if (!Number.isInteger(eventRetention) || eventRetention < 0) throw bad("retention must be a whole number of events (0 keeps all)");
  const timeoutMs = (name: string, given: number | undefined, fallback: number): number => {
    if (given !== undefined) return given;
    const text = parsed.searchParams.get(name);
    if (text === null) return fallback;
    const seconds = Number(text);
    if (text.trim() === "" || !Number.isFinite(seconds) || seconds <= 0) throw bad(`${name} must be a number of seconds above 0, not "${text}"`);
    return Math.max(1, Math.round(seconds * 1000));
  };
  const connectTimeout = timeoutMs("connect_timeout", options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  const commandTimeoutMs = timeoutMs("command_timeout", options.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS);
  const prefix = options.prefix ?? parsed.searchParams.get("prefix") ?? "pitwall:";
  if (prefix === "") throw bad("the key prefix must not be empty");
  const port = parsed.port === "" ? 6379 : Number(parsed.port);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  const tls = tlsOptions(parsed, host, description);
  return {
    description,
    prefix,
    eventRetention,
    commandTimeoutMs,
    options: {
      host,
      port,
      db: db === "" ? 0 : Number(db),
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(tls ? { tls } : {}),
      connectTimeout,
    },
  };
}

/**
 * A connected client. The first connection must succeed (a clear one-line error otherwise);
 * after that, a lost connection is retried for as long as it takes and commands wait for it.
 */
export async function connectRedis(target: RedisTarget, name: string): Promise<Redis> {
  quietIoredis();
  let connected = false;
  let lastError: Error | undefined;
  const client = new Redis({
    ...target.options,
    lazyConnect: true,
    connectionName: name,
    // Disconnecting arms a timer (2 s by default) that destroys a socket the server has not closed
    // by then; it is never cleared when the socket had already closed (the server gone away), and
    // it keeps the process alive: a CLI stopped by Ctrl-C, or a program that closed its store,
    // would linger that long for nothing. The socket is ours to drop once we disconnect.
    disconnectTimeout: 100,
    retryStrategy: (attempt) => (connected ? Math.min(attempt * 100, 2_000) : null),
    // Left to the OS, the first keepalive probe comes after two idle hours (Linux). Probed after a
    // few idle seconds, a connection whose path died while idle is closed (and made again) before
    // it is used, and a NAT or load balancer that forgets idle connections sees this one in use.
    keepAlive: KEEPALIVE_MS,
  });
  client.on("error", (error: Error) => {
    lastError = error;
  });
  timeCommands(client, target.commandTimeoutMs);
  const timeoutMs = target.options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const silent = new Error(`no answer within ${timeoutMs / 1000} s`);
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_resolve, reject) => {
    // The TCP timeout does not cover a server that accepts and then never answers.
    timer = setTimeout(() => reject(silent), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), silence]);
  } catch (error) {
    dropClient(client);
    const failure = lastError ?? error;
    // ioredis's own bound on the TCP connection (a network that drops the packets) is a silence too.
    const cause = /\bETIMEDOUT\b/.test(errorMessage(failure)) ? silent : failure;
    const { host = "localhost", port = 6379, tls } = target.options;
    // A server that refused the handshake with an alert will refuse it again: not transient.
    const alert = tls && cause !== silent ? await alertReason(failure, { host, port, tls }, timeoutMs) : undefined;
    if (alert) throw new StoreError(`cannot connect to Redis at ${withColon(target.description)} ${alert}`, { cause: failure });
    const message = reason(cause);
    throw new StoreError(`cannot connect to Redis at ${withColon(target.description)} ${message}${connectHint(message, tls, cause === silent)}`, {
      cause: failure,
      // Refused or unreachable now may answer later (a server restarting); a wrong password will not.
      transient: cause === silent || connectionDown(cause) || /timed out/i.test(errorMessage(cause)),
    });
  } finally {
    clearTimeout(timer);
  }
  connected = true;
  // ioredis goes on in database 0 when its SELECT fails: an application meant for another would
  // then share (and run) the runs of database 0.
  const db = target.options.db ?? 0;
  if (db !== 0) {
    try {
      await client.select(db);
    } catch (error) {
      const failure = (await knownFailure(error, failureContext(client, target))) ?? new StoreError(`Redis at ${target.description} has no database ${db} (${errorMessage(error)}; see its \`databases\` setting)`, { cause: error });
      dropClient(client);
      throw failure;
    }
  }
  return client;
}

/**
 * Closes a client at once, failing the commands it holds ("Connection is closed"). A client
 * waiting to reconnect (its server gone away) that is disconnected keeps the commands queued for
 * the reconnect, with their timeout timers, which keep the process alive until they fire
 * (redis/ioredis#1535): a connection attempt started and dropped at once fails them.
 */
export function dropClient(client: Redis): void {
  if (client.status === "reconnecting") client.connect().catch(() => undefined);
  client.disconnect();
}

function reason(error: unknown): string {
  // OpenSSL's messages (a TLS alert from the server) end with a line break.
  const message = errorMessage(error).replace(/\s*\n\s*/g, " ").trim();
  return /^Protocol error/.test(message) ? `it does not answer as Redis does (${message.replace(/\s*Please report this\.?$/, "")})` : message;
}
