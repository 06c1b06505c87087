import { createConnection, createServer, type Server, type Socket } from "node:net";

/** A client's connection and the proxy's to the server; a black-holed one carries no more replies, nor ends. */
interface Pair {
  holed: boolean;
  requestsPass: boolean;
}

/**
 * A loopback TCP proxy in front of a server that can fail as a network does: lose a reply on
 * purpose (the next bytes the server sends are dropped and the client's connection is cut, as a
 * network failure between a command's execution and its reply would do), refuse connections
 * (a partition that resets them), or black-hole them (a NAT entry flushed, a load balancer's idle
 * cut: the connections stay open and silently carry nothing).
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<Pair>();
  private cutNextReply = false;
  private down = false;
  /** While black-holing: whether requests still reach the server (only replies are lost). */
  private holing: { requestsPass: boolean } | undefined;
  /** How many replies were lost so far. */
  cuts = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<number> {
    // Half-open: a black hole does not answer a client's FIN either (a live pair passes it on).
    this.server = createServer({ allowHalfOpen: true }, (client) => {
      if (this.down) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ port: this.targetPort, host: "127.0.0.1" });
      const pair: Pair = { holed: this.holing !== undefined, requestsPass: this.holing?.requestsPass ?? false };
      this.pairs.add(pair);
      this.sockets.add(client).add(upstream);
      client.on("data", (chunk) => (!pair.holed || pair.requestsPass) && upstream.write(chunk));
      upstream.on("data", (chunk) => {
        if (pair.holed) return;
        if (this.cutNextReply) {
          this.cutNextReply = false;
          this.cuts++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      client.on("end", () => !pair.holed && upstream.end());
      const close = () => {
        // Nothing crosses a black hole, not even a connection's end: the other side stays open.
        if (pair.holed) return;
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
        this.pairs.delete(pair);
      };
      client.on("close", close).on("error", close);
      upstream.on("close", close).on("error", close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    return typeof address === "object" && address ? address.port : 0;
  }

  /** The next reply from the server is lost and the connection cut. */
  loseNextReply(): void {
    this.cutNextReply = true;
  }

  /** Cuts every connection and refuses new ones until `restore` (a network partition). */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.down = false;
  }

  /**
   * Every connection open now carries nothing from here on, for good, and is never closed; so do
   * the ones made until `heal`. Neither side is told. `requestsPass`: only the replies are lost
   * (the server still gets, and applies, what is sent).
   */
  blackHole(options: { requestsPass?: boolean } = {}): void {
    this.holing = { requestsPass: options.requestsPass ?? false };
    for (const pair of this.pairs) Object.assign(pair, { holed: true, ...this.holing });
  }

  /** Connections made from now on work again; the black-holed ones stay dead. */
  heal(): void {
    this.holing = undefined;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
