import { X509Certificate, createPrivateKey } from "node:crypto";

/**
 * How far this machine's clock may be from the server's without a certificate being refused
 * here that the server would accept: a certificate made a moment ago elsewhere may start a few
 * seconds in this clock's future. Inside this margin the server decides, and its alert is told.
 */
const CLOCK_MARGIN_MS = 5 * 60_000;

interface PemFile {
  path: string;
  text: string;
}

/**
 * What the server would refuse a client certificate for, found before connecting: one that has
 * expired or is not valid yet, or a key that is not its own. The server says so only as an alert
 * that TLS 1.3 mostly turns into a reset. Undefined when nothing is wrong, or when a file cannot
 * be parsed here (Node's TLS then says why).
 */
export function clientCertificateProblem(cert: PemFile, key: PemFile, now = Date.now()): string | undefined {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert.text);
  } catch {
    return undefined;
  }
  const validTo = Date.parse(certificate.validTo);
  if (now - validTo > CLOCK_MARGIN_MS) return `tls_cert ${cert.path} expired on ${utc(validTo)}; renew it`;
  const validFrom = Date.parse(certificate.validFrom);
  if (validFrom - now > CLOCK_MARGIN_MS) {
    return `tls_cert ${cert.path} is not valid until ${utc(validFrom)}; give one valid now, or check this machine's clock`;
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key.text);
  } catch {
    return undefined;
  }
  if (!certificate.checkPrivateKey(privateKey)) return `tls_key ${key.path} is not the key of tls_cert ${cert.path}`;
  return undefined;
}

/** Node's dates ("Jan  2 03:04:05 2020 GMT") as "2020-01-02 03:04:05 UTC". */
function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
