import { TLSSocket } from "node:tls";
import type { Command, Redis } from "ioredis";

/** Clients whose connection was given up for silence, until they are ready again or told why not. */
const silent = new WeakSet<Redis>();

/**
 * Fails a command with no reply within `ms` ("Command timed out"), as ioredis's `commandTimeout`
 * does, and gives up the connection it waits on, which ioredis then makes again.
 *
 * A connection whose packets the network silently drops (a NAT or conntrack entry flushed, a
 * load balancer's idle cut, a failover that left the old address dark) is never reset: TCP
 * retransmits for about a quarter of an hour before it gives up, and keepalive probes nothing
 * that waits for an acknowledgement. Kept, it would time out every later command too, for good.
 *
 * A command counts as unanswered only once the replies already received are read: after this
 * process's event loop was held (a node computing without awaiting, a long GC pause, a starved
 * CPU), expired timers run before the socket is read again, and a reply that came meanwhile would
 * be taken for a silent server. Declared in the next check phase instead, after a poll of the
 * sockets, it is read first.
 *
 * A blocking read (XREAD BLOCK) waits its block on purpose, and `ms` past it.
 */
export function timeCommands(client: Redis, ms: number): void {
  // The first connection is the caller's to bound (connectRedis): until it is made, a client
  // does not reconnect, and a connection given up would only fail the attempt with a vaguer line.
  let madeOnce = false;
  client.on("ready", () => {
    madeOnce = true;
    silent.delete(client);
  });
  client.on("error", (error: Error) => {
    // A refusal or a reset is an answer (from the server or a router); a connect or a ready check
    // that timed out is more of the same silence.
    if (!/timed out|ETIMEDOUT/i.test(error.message)) silent.delete(client);
  });

  const send = client.sendCommand.bind(client);
  // A command passes through sendCommand again when it is sent after a reconnect: timed once.
  const timed = new WeakSet<Command>();
  const expired = new WeakSet<Command>();
  client.sendCommand = (command: Command, stream?: Parameters<Redis["sendCommand"]>[1]) => {
    // ioredis sends again, on the new connection and before anything newer, the commands that
    // were left unanswered: a renewal or a commit that timed out reaches the server all the same
    // (scripts are applied once). Not a blocking read its caller gave up on: it would hold the new
    // connection for its whole block, and the reads queued behind it past their own bound.
    if (expired.has(command) && blockMs(command) > 0) return command.promise;
    if (!timed.has(command)) {
      timed.add(command);
      let settled = false;
      const timer = setTimeout(() => setImmediate(() => settled || expire(command)), ms + blockMs(command));
      const done = () => {
        settled = true;
        clearTimeout(timer);
      };
      command.promise.then(done, done);
    }
    return send(command, stream);
  };

  function expire(command: Command): void {
    expired.add(command);
    command.reject(new Error("Command timed out"));
    // Only the connection the command was written on and still waits on is to blame; one it is
    // merely queued for (reconnecting) is bounded by ioredis's connect timeout and ready check.
    const current = client.status === "ready" || (client.status === "connect" && madeOnce);
    if (current && waitsOn(client, command)) giveUp(client);
  }
}

/** Whether the client's connection was given up for silence, and nothing since said otherwise. */
export function wentSilent(client: Redis): boolean {
  return silent.has(client);
}

/** Whether `command` was written on the client's connection and waits for its reply there. */
function waitsOn(client: Redis, command: Command): boolean {
  const queue = client.commandQueue;
  for (let i = 0; i < queue.length; i++) if (queue.peekAt(i)?.command === command) return true;
  return false;
}

/**
 * Drops the connection; ioredis makes a new one (its retryStrategy) and sends the unanswered
 * commands again. A plain TCP connection is reset, which discards what its kernel still holds:
 * were the network to heal, the bytes left unsent would otherwise reach the server late, after
 * the copies sent again and after newer commands. (Node cannot reset a TLS connection: it is
 * closed.)
 */
function giveUp(client: Redis): void {
  silent.add(client);
  const stream = client.stream;
  if (stream instanceof TLSSocket) stream.destroy();
  else stream.resetAndDestroy();
}

/** How long a blocking read (XREAD BLOCK, the event tail's) blocks, 0 for any other command. */
function blockMs(command: Command): number {
  if (command.name.toLowerCase() !== "xread") return 0;
  const at = command.args.findIndex((arg) => String(arg).toUpperCase() === "BLOCK");
  return at < 0 ? 0 : Number(command.args[at + 1]);
}
