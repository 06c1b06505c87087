import { isIP } from "node:net";
import { createSecureContext, type ConnectionOptions } from "node:tls";
import { ValidationError, errorMessage, fileProblem } from "../../errors.js";
import { readTextFile } from "../../text-file.js";
import { withColon } from "../open.js";
import { clientCertificateProblem } from "./client-certificate.js";
import { SILENCE_HINT } from "./failures.js";

/** The URL parameters naming TLS files, and the option of Node's TLS each one fills. */
export const TLS_PARAMETERS = { tls_ca: "ca", tls_cert: "cert", tls_key: "key" } as const;

type TlsParameter = keyof typeof TLS_PARAMETERS;

/**
 * The TLS options of a `rediss://` URL: the CA that signed the server's certificate (in place of
 * the system's), and a client certificate and key for a server that asks for one
 * (`tls-auth-clients yes`). The files are read now, so that a path that cannot be read, or a client
 * certificate the server would refuse, is said at once rather than as a failed handshake.
 */
export function tlsOptions(parsed: URL, host: string, description: string): ConnectionOptions | undefined {
  const given = (Object.keys(TLS_PARAMETERS) as TlsParameter[]).filter((name) => parsed.searchParams.has(name));
  if (parsed.protocol !== "rediss:") {
    if (given.length > 0) throw new ValidationError(`store URL ${description} gives ${given[0]}, which only a rediss:// (TLS) URL takes`);
    return undefined;
  }
  if (given.includes("tls_cert") !== given.includes("tls_key")) {
    throw new ValidationError(`store URL ${description} gives ${given.includes("tls_cert") ? "tls_cert without tls_key" : "tls_key without tls_cert"}: a client certificate needs both`);
  }
  const files: ConnectionOptions = {};
  const pem: Partial<Record<TlsParameter, { path: string; text: string }>> = {};
  for (const name of given) {
    const path = parsed.searchParams.get(name)!;
    pem[name] = { path, text: readPem(name, path, description) };
    files[TLS_PARAMETERS[name]] = pem[name].text;
  }
  const problem = pem.tls_cert && pem.tls_key ? clientCertificateProblem(pem.tls_cert, pem.tls_key) : undefined;
  if (problem) throw new ValidationError(`store URL ${withColon(description)} ${problem}`);
  try {
    createSecureContext(files);
  } catch (error) {
    throw new ValidationError(`store URL ${withColon(description)} the TLS files cannot be used (${errorMessage(error)})`);
  }
  // SNI names a host, never an address: for an IP the certificate is checked against it instead.
  return { ...(isIP(host) ? {} : { servername: host }), ...files };
}

function readPem(name: TlsParameter, path: string, description: string): string {
  const where = `store URL ${withColon(description)} ${name}`;
  if (path === "") throw new ValidationError(`${where} names no file`);
  let text: string;
  try {
    text = readTextFile(path);
  } catch (error) {
    throw new ValidationError(`${where} ${path} cannot be read: ${fileProblem(error)}`);
  }
  if (!text.includes("-----BEGIN ")) throw new ValidationError(`${where} ${path} is not a PEM file (no "-----BEGIN" line)`);
  return text;
}

/**
 * What a failed first connection may mean, after Node's words for it (`silent`: no answer in
 * time): a server stopped or cut off says nothing, and a TLS client talking to a plaintext port
 * hears nothing it understands either; a server that refuses the client certificate may reset
 * the connection without an alert pitwall heard (tls-alerts.ts); a private CA is not trusted
 * unless named.
 */
export function connectHint(message: string, tls: ConnectionOptions | undefined, silent: boolean): string {
  const reset = /ECONNRESET|socket hang up|Connection is closed/i.test(message);
  if (!tls) return reset ? " (if that port serves TLS, use rediss://)" : silent ? SILENCE_HINT : "";
  if (silent) return " (is the server stopped or frozen, the network dropping packets, or the port a plaintext one? rediss:// speaks TLS; a plaintext port wants redis://)";
  if (/self[- ]signed certificate|unable to get local issuer certificate|unable to verify the first certificate/i.test(message)) {
    return ": name the CA that signed the server's certificate with tls_ca=/path/to/ca.pem in the URL (or NODE_EXTRA_CA_CERTS)";
  }
  if (reset) {
    return tls.cert
      ? " (the server may have refused the client certificate: check that tls_cert= is signed by a CA in the server's tls-ca-cert-file)"
      : " (does the server require a client certificate? give tls_cert= and tls_key=)";
  }
  return "";
}
