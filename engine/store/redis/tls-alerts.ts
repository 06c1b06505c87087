import { connect, type ConnectionOptions } from "node:tls";
import { errorMessage } from "../../errors.js";

const CLIENT_CERT = "give tls_cert= and tls_key= in the URL";
const SERVER_CA = "the server's tls-ca-cert-file";
const CIPHERS = "see its tls-ciphers and tls-ciphersuites";

/**
 * What an alert a Redis server ends the handshake with asks to fix, by its number (RFC 8446
 * §6.2): OpenSSL says only, say, "tlsv13 alert certificate required ... SSL alert number 116".
 * 42 to 46 and 48 are what OpenSSL sends for a client certificate it does not accept.
 */
const ALERTS: Record<number, (tls: ConnectionOptions) => string> = {
  40: (tls) =>
    tls.cert
      ? `the server refused the TLS handshake: it may accept no cipher Node offers; ${CIPHERS}`
      : `the server refused the TLS handshake: if it requires a client certificate (tls-auth-clients yes), ${CLIENT_CERT}; else it may accept no cipher Node offers; ${CIPHERS}`,
  42: () => "the server refused the client certificate (tls_cert=) as bad: it may not be valid yet, or its key or signature too weak for the server (an RSA key under 2048 bits, SHA-1); give another",
  43: () => "the server refused the client certificate (tls_cert=) for its use: give one made for client authentication (extendedKeyUsage clientAuth, or none)",
  44: () => "the server refused the client certificate (tls_cert=): it has been revoked; give a current one",
  45: () => "the client certificate (tls_cert=) or a CA certificate it is signed by has expired: renew it",
  46: () => `the server could not verify the client certificate (tls_cert=): check that it is valid now and signed by a CA in ${SERVER_CA}`,
  48: () => `the server does not trust the CA that signed the client certificate (tls_cert=): give one signed by a CA in ${SERVER_CA}, or add its CA there`,
  70: () => "the server accepts no TLS version Node speaks (1.2 and 1.3): allow TLSv1.2 or TLSv1.3 in its tls-protocols",
  71: () => `the server wants stronger ciphers than Node offered: ${CIPHERS}`,
  116: () => `the server requires a client certificate (tls-auth-clients yes): ${CLIENT_CERT}`,
};

/**
 * A connection that failed on a TLS alert, as what to fix followed by OpenSSL's words for the
 * alert in parentheses; undefined for any other failure, or an alert pitwall has no advice for.
 * Under TLS 1.3 a server checks the client certificate only after the client has finished its
 * part of the handshake: ioredis has written its first commands by then, and the alert is
 * mostly lost to the reset that follows ("write ECONNRESET"). A second handshake that writes
 * nothing hears it.
 */
export async function alertReason(cause: unknown, target: { host: string; port: number; tls: ConnectionOptions }, timeoutMs: number): Promise<string | undefined> {
  let message = errorMessage(cause);
  if (!/SSL alert number/.test(message) && /ECONNRESET|EPIPE|socket hang up|Connection is closed/.test(message)) {
    const heard = await quietHandshake(target, Math.min(timeoutMs, 2_000));
    if (heard) message = errorMessage(heard);
  }
  const number = Number(/SSL alert number (\d+)/.exec(message)?.[1]);
  const advice = ALERTS[number];
  if (!advice) return undefined;
  const name = /(?:sslv3|tlsv1\d*) alert [a-z ]+/.exec(message)?.[0] ?? "TLS alert";
  return `${advice(target.tls)} (${name}, SSL alert number ${number})`;
}

/** A handshake that sends nothing after it: the error that ends it, or undefined if none comes within `ms`. */
function quietHandshake(target: { host: string; port: number; tls: ConnectionOptions }, ms: number): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port, ...target.tls });
    const done = (error?: Error) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(error);
    };
    const timer = setTimeout(done, ms);
    socket.on("error", done);
    socket.on("close", () => done());
  });
}
