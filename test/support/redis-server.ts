import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServerOptions {
  /** Keep an append-only file (for restart tests); `appendfsync` then says how often it is fsynced. */
  appendonly?: boolean;
  appendfsync?: "always" | "everysec";
  /** Serve TLS only, with a certificate for `localhost` signed by a CA made for this server (`caFile`). */
  tls?: boolean;
  /** With `tls`: refuse a client without a certificate signed by the server's CA (`clientCertFile`, `clientKeyFile`). */
  clientCertificates?: boolean;
  /** With `tls`: the TLS versions it accepts (its `tls-protocols`, e.g. "TLSv1.2"; by default 1.2 and 1.3). */
  tlsProtocols?: string;
}

/**
 * A real redis-server for one test file: on a free loopback port, in a temporary folder, with no
 * snapshots (and, when asked, an append-only file so that it can be killed and restarted).
 */
export class RedisServer {
  readonly dir = mkdtempSync(join(tmpdir(), "pitwall-redis-"));
  private process: ChildProcess | undefined;
  private portNumber = 0;

  constructor(private readonly options: RedisServerOptions = {}) {}

  get port(): number {
    return this.portNumber;
  }

  get url(): string {
    return this.options.tls ? `rediss://localhost:${this.portNumber}` : `redis://127.0.0.1:${this.portNumber}`;
  }

  /** The certificate of the CA that signed a TLS server's certificate. */
  get caFile(): string {
    return join(this.dir, "ca.crt");
  }

  /** A client certificate, and its key, signed by the server's CA (made with `tls`). */
  get clientCertFile(): string {
    return join(this.dir, "client.crt");
  }

  get clientKeyFile(): string {
    return join(this.dir, "client.key");
  }

  async start(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (this.portNumber === 0 || attempt > 0) this.portNumber = await freePort();
      try {
        await this.launch();
        return;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  }

  /** Kills the server (SIGKILL: no shutdown work) and starts it again on the same port and folder. */
  async crashAndRestart(downMs = 0): Promise<void> {
    await this.stop("SIGKILL");
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.launch();
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered, until `resume`. */
  pause(): void {
    this.process?.kill("SIGSTOP");
  }

  resume(): void {
    this.process?.kill("SIGCONT");
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const args = ["--bind", "127.0.0.1", "--dir", this.dir, "--save", "", "--daemonize", "no", "--logfile", ""];
    if (this.options.tls) {
      makeCertificates(this.dir);
      const file = (name: string) => join(this.dir, name);
      args.push("--port", "0", "--tls-port", String(this.portNumber), "--tls-auth-clients", this.options.clientCertificates ? "yes" : "no");
      args.push("--tls-cert-file", file("server.crt"), "--tls-key-file", file("server.key"), "--tls-ca-cert-file", file("ca.crt"));
      if (this.options.tlsProtocols) args.push("--tls-protocols", this.options.tlsProtocols);
    } else {
      args.push("--port", String(this.portNumber));
    }
    if (this.options.appendonly) args.push("--appendonly", "yes", "--appendfsync", this.options.appendfsync ?? "everysec");
    const child = spawnTied("redis-server", args);
    this.process = child;
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.portNumber))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        this.process = undefined;
        throw new Error(`redis-server did not start on port ${this.portNumber}: ${output.trim().split("\n").slice(-3).join(" | ")}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // A server that speaks no TLS version Node does cannot be sent PING; it starts empty.
    if (this.options.tlsProtocols && !/TLSv1\.[23]/.test(this.options.tlsProtocols)) return;
    // The port accepts before the data set is loaded; PING answers only once it is.
    const tls = this.options.tls ? { ca: readFileSync(this.caFile), cert: readFileSync(this.clientCertFile), key: readFileSync(this.clientKeyFile) } : undefined;
    while (!(await pong(this.portNumber, tls))) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether util-linux's setpriv is here to set a parent-death signal (Linux): see `spawnTied`. */
export const SETPRIV = spawnSync("setpriv", ["--version"], { stdio: "ignore" }).status === 0;

/**
 * A server process that the kernel kills (SIGKILL) when the process that started it dies: a test
 * run that is killed (vitest sent SIGTERM or SIGINT takes its workers with it) runs no afterAll,
 * and its servers would be left running. setpriv sets the parent-death signal, then becomes the
 * server, so the process's pid is the server's (for stop, pause, crash). Without setpriv (not
 * Linux) the server is started as it is and only afterAll stops it.
 */
function spawnTied(command: string, args: string[]): ChildProcess {
  const [file, argv] = SETPRIV ? ["setpriv", ["--pdeathsig", "KILL", "--", command, ...args]] : [command, args];
  return spawn(file, argv, { stdio: ["ignore", "pipe", "pipe"] });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function pong(port: number, tls?: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls ? tlsConnect({ port, host: "127.0.0.1", servername: "localhost", ...tls }) : createConnection({ port, host: "127.0.0.1" });
    let reply = "";
    socket.once(tls ? "secureConnect" : "connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) {
        socket.destroy();
        resolve(reply.startsWith("+PONG"));
      }
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * A CA, a certificate for localhost (and 127.0.0.1) and one for a client, both signed by it, made
 * with openssl (once: a restarted server keeps them).
 */
function makeCertificates(dir: string): void {
  if (existsSync(join(dir, "client.crt"))) return;
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=pitwall test CA");
  writeFileSync(join(dir, "san.cnf"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  for (const [name, subject] of [["server", "/CN=localhost"], ["client", "/CN=pitwall test client"]]) {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject!);
    openssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", ...(name === "server" ? ["-extfile", "san.cnf"] : []));
  }
}
