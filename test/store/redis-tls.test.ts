import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError, ValidationError, openStore } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { RedisStore } from "../../engine/store/redis/redis-store.js";
import { cliHarness } from "../support/cli.js";
import { RedisServer } from "../support/redis-server.js";

/** `rediss://` with the files of a TLS connection given in the URL (Debian's redis-server is built with TLS). */
describe("Redis store over TLS: the server's CA and a client certificate given in the URL", () => {
  const mutual = new RedisServer({ tls: true, clientCertificates: true });
  const plain = new RedisServer();
  const cli = cliHarness();
  beforeAll(() => Promise.all([mutual.start(), plain.start()]));
  afterAll(() => Promise.all([mutual.dispose(), plain.dispose()]));

  const query = (files: Record<string, string>) => new URLSearchParams(files).toString();
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: mutual.dir, stdio: "ignore" });

  /** A client certificate the server's CA did not sign. */
  function selfSigned(name: string): { cert: string; key: string } {
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.crt`, "-days", "1", "-subj", `/CN=${name}`);
    return { cert: join(mutual.dir, `${name}.crt`), key: join(mutual.dir, `${name}.key`) };
  }

  /** A client certificate signed by the server's CA (or by `ca`), valid for a day, with a key of `bits`, and these extensions. */
  function signedByServerCa(name: string, options: { bits?: number; extensions?: string; ca?: { cert: string; key: string } }): { cert: string; key: string } {
    openssl("req", "-newkey", `rsa:${options.bits ?? 2048}`, "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    const extensions: string[] = [];
    if (options.extensions !== undefined) {
      writeFileSync(join(mutual.dir, `${name}.cnf`), options.extensions);
      extensions.push("-extfile", `${name}.cnf`);
    }
    openssl("x509", "-req", "-in", `${name}.csr`, "-CA", options.ca?.cert ?? "ca.crt", "-CAkey", options.ca?.key ?? "ca.key", "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", ...extensions);
    return { cert: join(mutual.dir, `${name}.crt`), key: join(mutual.dir, `${name}.key`) };
  }
  /**
   * A certificate signed by the server's CA, valid from `start` to `end` (openssl ca's
   * YYYYMMDDHHMMSSZ; openssl x509 sets only a number of days from now), with these extensions.
   */
  function signedWithDates(name: string, start: string, end: string, extensions = ""): { cert: string; key: string } {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    const config = "[ca]\ndefault_ca=dated\n[dated]\ndatabase=index.txt\nunique_subject=no\nserial=serial\nnew_certs_dir=.\ndefault_md=sha256\npolicy=any\n[any]\ncommonName=supplied\n";
    writeFileSync(join(mutual.dir, "dated.cnf"), config);
    writeFileSync(join(mutual.dir, `${name}.ext`), extensions);
    writeFileSync(join(mutual.dir, "index.txt"), "", { flag: "a" });
    openssl("ca", "-batch", "-config", "dated.cnf", "-create_serial", "-cert", "ca.crt", "-keyfile", "ca.key", "-in", `${name}.csr`, "-out", `${name}.crt`, "-notext", "-startdate", start, "-enddate", end, "-extfile", `${name}.ext`);
    return { cert: join(mutual.dir, `${name}.crt`), key: join(mutual.dir, `${name}.key`) };
  }

  /** A client certificate valid now, signed by an intermediate CA (signed by the server's CA) that has expired; the file holds both. */
  function underExpiredCa(name: string): { cert: string; key: string } {
    const ca = signedWithDates(`${name}-ca`, "20200101000000Z", "20200102000000Z", "basicConstraints=critical,CA:TRUE\n");
    const leaf = signedByServerCa(name, { ca });
    writeFileSync(leaf.cert, readFileSync(leaf.cert, "utf8") + readFileSync(ca.cert, "utf8"));
    return leaf;
  }

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

  it("says what is missing when the handshake fails: the server's CA, or a client certificate the server accepts", async () => {
    const untrusted = await failure(`${mutual.url}/0`);
    expect(untrusted).toBeInstanceOf(StoreError);
    expect(untrusted!.message).toMatch(/self[- ]signed certificate in certificate chain: name the CA that signed the server's certificate with tls_ca=\/path\/to\/ca\.pem in the URL \(or NODE_EXTRA_CA_CERTS\)$/);

    // Under TLS 1.3 the server checks the client certificate after the client's part of the
    // handshake: its alert mostly reaches the client as a reset, and pitwall hears it all the same.
    const trusting = `${mutual.url}/0?${query({ tls_ca: mutual.caFile })}`;
    const noCertificate = await failure(trusting);
    expect(noCertificate!.message).toBe(
      `cannot connect to Redis at ${trusting}: the server requires a client certificate (tls-auth-clients yes): give tls_cert= and tls_key= in the URL (tlsv13 alert certificate required, SSL alert number 116)`,
    );
    // It will say the same next time: not a failure to retry.
    expect((noCertificate as StoreError).transient).toBe(false);

    const refusals: [{ cert: string; key: string }, string][] = [
      [
        selfSigned("stranger"),
        "the server does not trust the CA that signed the client certificate (tls_cert=): give one signed by a CA in the server's tls-ca-cert-file, or add its CA there (tlsv1 alert unknown ca, SSL alert number 48)",
      ],
      // An expired client certificate is refused before connecting (below); an expired CA in its chain only by the server.
      [underExpiredCa("expired-chain"), "the client certificate (tls_cert=) or a CA certificate it is signed by has expired: renew it (sslv3 alert certificate expired, SSL alert number 45)"],
      [
        signedByServerCa("weak", { bits: 1024 }),
        "the server refused the client certificate (tls_cert=) as bad: it may not be valid yet, or its key or signature too weak for the server (an RSA key under 2048 bits, SHA-1); give another (sslv3 alert bad certificate, SSL alert number 42)",
      ],
      [
        signedByServerCa("server-only", { extensions: "extendedKeyUsage=serverAuth\n" }),
        "the server refused the client certificate (tls_cert=) for its use: give one made for client authentication (extendedKeyUsage clientAuth, or none) (sslv3 alert unsupported certificate, SSL alert number 43)",
      ],
    ];
    for (const [files, reason] of refusals) {
      const url = `${mutual.url}/0?${query({ tls_ca: mutual.caFile, tls_cert: files.cert, tls_key: files.key })}`;
      expect((await failure(url))!.message).toBe(`cannot connect to Redis at ${url}: ${reason}`);
    }
  });

  it("says what a server that speaks only TLS 1.2 wants (a client certificate), and that one speaking only TLS 1.1 speaks no version Node does", async () => {
    const onlyTls12 = new RedisServer({ tls: true, clientCertificates: true, tlsProtocols: "TLSv1.2" });
    const onlyTls11 = new RedisServer({ tls: true, tlsProtocols: "TLSv1.1" });
    await Promise.all([onlyTls12.start(), onlyTls11.start()]);
    try {
      const noCertificate = `${onlyTls12.url}/0?${query({ tls_ca: onlyTls12.caFile })}`;
      expect((await failure(noCertificate))!.message).toBe(
        `cannot connect to Redis at ${noCertificate}: the server refused the TLS handshake: if it requires a client certificate (tls-auth-clients yes), give tls_cert= and tls_key= in the URL; else it may accept no cipher Node offers; see its tls-ciphers and tls-ciphersuites (sslv3 alert handshake failure, SSL alert number 40)`,
      );
      const oldVersion = `${onlyTls11.url}/0?${query({ tls_ca: onlyTls11.caFile })}`;
      expect((await failure(oldVersion))!.message).toBe(
        `cannot connect to Redis at ${oldVersion}: the server accepts no TLS version Node speaks (1.2 and 1.3): allow TLSv1.2 or TLSv1.3 in its tls-protocols (tlsv1 alert protocol version, SSL alert number 70)`,
      );
    } finally {
      await Promise.all([onlyTls12.dispose(), onlyTls11.dispose()]);
    }
  });

  it("says a port may not speak what the URL's scheme does: rediss:// to a plaintext port, redis:// to a TLS one", async () => {
    const tlsToPlain = await failure(`rediss://127.0.0.1:${plain.port}/0`, { connectTimeoutMs: 500 });
    expect(tlsToPlain!.message).toBe(
      `cannot connect to Redis at rediss://127.0.0.1:${plain.port}/0: no answer within 0.5 s (is the server stopped or frozen, the network dropping packets, or the port a plaintext one? rediss:// speaks TLS; a plaintext port wants redis://)`,
    );
    const plainToTls = await failure(`redis://127.0.0.1:${mutual.port}/0`);
    expect(plainToTls!.message).toMatch(new RegExp(`^cannot connect to Redis at redis://127.0.0.1:${mutual.port}/0: .* \\(if that port serves TLS, use rediss://\\)$`));
  });

  it("refuses a client certificate that has expired or is not valid yet, or a key not its own, before connecting, naming the file", async () => {
    const expired = signedWithDates("expired", "20200101000000Z", "20200102030405Z");
    const future = signedWithDates("future", "20990101000000Z", "20991231000000Z");
    const otherKey = { cert: mutual.clientCertFile, key: join(mutual.dir, "server.key") };
    const url = (files: { cert: string; key: string }) => `${mutual.url}/0?${query({ tls_ca: mutual.caFile, tls_cert: files.cert, tls_key: files.key })}`;
    const cases: [string, string][] = [
      [url(expired), `tls_cert ${expired.cert} expired on 2020-01-02 03:04:05 UTC; renew it`],
      [url(future), `tls_cert ${future.cert} is not valid until 2099-01-01 00:00:00 UTC; give one valid now, or check this machine's clock`],
      [url(otherKey), `tls_key ${otherKey.key} is not the key of tls_cert ${otherKey.cert}`],
    ];
    for (const [url, problem] of cases) {
      const error = await openStore(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe(`store URL ${url}: ${problem}`);
    }
    const [url0, problem0] = cases[0]!;
    const r = await cli.run(["runs", "--store", url0]);
    expect([r.code, r.stderr]).toEqual([2, `pitwall runs: store URL ${url0}: ${problem0}\n`]);
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
      [`redis://127.0.0.1:${plain.port}/0?tls_ca=${mutual.caFile}`, `store URL redis://127.0.0.1:${plain.port}/0?tls_ca=${mutual.caFile} gives tls_ca, which only a rediss:// (TLS) URL takes`],
    ];
    for (const [url, message] of cases) {
      const error = await openStore(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe(message);
    }
  });
});
