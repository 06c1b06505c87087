import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError, ValidationError, openStore } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { RedisStore } from "../../engine/store/redis/redis-store.js";
import { RedisServer } from "../support/redis-server.js";

/** `rediss://` with the files of a TLS connection given in the URL (Debian's redis-server is built with TLS). */
describe("Redis store over TLS: the server's CA and a client certificate given in the URL", () => {
  const mutual = new RedisServer({ tls: true, clientCertificates: true });
  const plain = new RedisServer();
  beforeAll(() => Promise.all([mutual.start(), plain.start()]));
  afterAll(() => Promise.all([mutual.dispose(), plain.dispose()]));

  const query = (files: Record<string, string>) => new URLSearchParams(files).toString();
  const failure = (url: string, options: { connectTimeoutMs?: number } = {}) => RedisStore.open(url, options).then(() => undefined, (e: unknown) => e as Error);

  it("connects to a server that requires client certificates (tls-auth-clients yes) with tls_ca, tls_cert and tls_key", async () => {
    const url = `${mutual.url}/0?${query({ prefix: "mtls:", tls_ca: mutual.caFile, tls_cert: mutual.clientCertFile, tls_key: mutual.clientKeyFile })}`;
    const store = await openStore(url);
    try {
      const id = newId("run");
      await store.createRun(newRun({ id, workflow: { name: "tls", version: "v-tls" }, state: {}, actor: "test" }));
      expect((await store.getRun(id))?.status).toBe("queued");
    } finally {
      await store.close();
    }
  });

  it("says what is missing when the handshake fails: the server's CA, a client certificate, or one the server does not accept", async () => {
    const untrusted = await failure(`${mutual.url}/0`);
    expect(untrusted).toBeInstanceOf(StoreError);
    expect(untrusted!.message).toMatch(/self[- ]signed certificate in certificate chain: name the CA that signed the server's certificate with tls_ca=\/path\/to\/ca\.pem in the URL \(or NODE_EXTRA_CA_CERTS\)$/);

    const noCertificate = await failure(`${mutual.url}/0?${query({ tls_ca: mutual.caFile })}`);
    expect(noCertificate!.message).toMatch(new RegExp(`^cannot connect to Redis at rediss://localhost:${mutual.port}/0\\?tls_ca=\\S+: .*\\(does the server require a client certificate\\? give tls_cert= and tls_key=\\)$`));

    // A client certificate the server's CA did not sign.
    const dir = mutual.dir;
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "stranger.key", "-out", "stranger.crt", "-days", "1", "-subj", "/CN=stranger"], { cwd: dir, stdio: "ignore" });
    const stranger = await failure(`${mutual.url}/0?${query({ tls_ca: mutual.caFile, tls_cert: join(dir, "stranger.crt"), tls_key: join(dir, "stranger.key") })}`);
    expect(stranger!.message).toMatch(/\(the server may have refused the client certificate: check that tls_cert= is signed by a CA in the server's tls-ca-cert-file\)$/);
  });

  it("says a port may not speak what the URL's scheme does: rediss:// to a plaintext port, redis:// to a TLS one", async () => {
    const tlsToPlain = await failure(`rediss://127.0.0.1:${plain.port}/0`, { connectTimeoutMs: 500 });
    expect(tlsToPlain!.message).toBe(
      `cannot connect to Redis at rediss://127.0.0.1:${plain.port}/0: no answer within 0.5 s (is the server stopped or frozen, the network dropping packets, or the port a plaintext one? rediss:// speaks TLS; a plaintext port wants redis://)`,
    );
    const plainToTls = await failure(`redis://127.0.0.1:${mutual.port}/0`);
    expect(plainToTls!.message).toMatch(new RegExp(`^cannot connect to Redis at redis://127.0.0.1:${mutual.port}/0: .* \\(if that port serves TLS, use rediss://\\)$`));
  });

  it("refuses TLS files it cannot read, a certificate without its key, and TLS parameters on a plaintext URL, before connecting", async () => {
    const notPem = join(mutual.dir, "not.pem");
    writeFileSync(notPem, "hello\n");
    const base = `${mutual.url}/0`;
    const cases: [string, string][] = [
      [`${base}?tls_ca=/nonexistent/ca.pem`, `store URL ${base}?tls_ca=/nonexistent/ca.pem: tls_ca /nonexistent/ca.pem cannot be read: no such file`],
      [`${base}?tls_ca=${mutual.dir}`, `store URL ${base}?tls_ca=${mutual.dir}: tls_ca ${mutual.dir} cannot be read: it is a folder, not a file`],
      [`${base}?tls_ca=${notPem}`, `store URL ${base}?tls_ca=${notPem}: tls_ca ${notPem} is not a PEM file (no "-----BEGIN" line)`],
      [`${base}?tls_cert=${mutual.clientCertFile}`, `store URL ${base}?tls_cert=${mutual.clientCertFile} gives tls_cert without tls_key: a client certificate needs both`],
      [`${base}?tls_cert=${mutual.clientCertFile}&tls_key=${join(mutual.dir, "server.key")}`, `store URL ${base}?tls_cert=${mutual.clientCertFile}&tls_key=${join(mutual.dir, "server.key")}: tls_key is not the key of tls_cert`],
      [`redis://127.0.0.1:${plain.port}/0?tls_ca=${mutual.caFile}`, `store URL redis://127.0.0.1:${plain.port}/0?tls_ca=${mutual.caFile} gives tls_ca, which only a rediss:// (TLS) URL takes`],
    ];
    for (const [url, message] of cases) {
      const error = await openStore(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe(message);
    }
  });
});
