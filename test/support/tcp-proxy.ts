import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of a server that can lose a reply on purpose: once armed, the
 * next bytes the server sends are dropped and the client's connection is cut, as a network
 * failure between a command's execution and its reply would do.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private cutNextReply = false;
  private down = false;
  /** How many replies were lost so far. */
  cuts = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<number> {
    this.server = createServer((client) => {
      if (this.down) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ port: this.targetPort, host: "127.0.0.1" });
      this.sockets.add(client).add(upstream);
      client.on("data", (chunk) => upstream.write(chunk));
      upstream.on("data", (chunk) => {
        if (this.cutNextReply) {
          this.cutNextReply = false;
          this.cuts++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
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

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
