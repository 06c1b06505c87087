/**
 * Why a model call failed. The code is what retry policies (`retryOn`) and the console see:
 * - MODEL_HTTP: the server refused the request (4xx), or kept failing (429, 5xx) past the retries;
 * - MODEL_NETWORK: the server could not be reached or stopped answering;
 * - MODEL_BAD_RESPONSE: the server answered something that is not a chat completion;
 * - INVALID_MODEL_OUTPUT: a well-formed answer that the node cannot use (bad JSON, bad tool
 *   arguments, a classification that is not an option) — asked again, then the node fails;
 * - NO_MODEL: this process has no model provider configured.
 */
export type ModelErrorCode = "MODEL_HTTP" | "MODEL_NETWORK" | "MODEL_BAD_RESPONSE" | "INVALID_MODEL_OUTPUT" | "NO_MODEL";

export class ModelError extends Error {
  constructor(
    readonly code: ModelErrorCode,
    message: string,
    readonly status?: number,
    /**
     * How long the server asked to be left alone (`Retry-After`): a node retried after this
     * error waits at least this long, whatever its own backoff says.
     */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/**
 * Replaces every occurrence of each secret in a text. Used on everything a provider puts into an
 * error or a log line, since servers echo headers and URLs back in their error bodies.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  }
  return out;
}
