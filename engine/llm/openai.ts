import { ModelError, scrub } from "./errors.js";
import { sleep } from "../sleep.js";
import { sseData } from "./sse.js";
import type { ModelCallInfo, ModelProvider, ModelRequest, ModelResponse } from "./types.js";
import { StreamAssembler, parseCompletion, requestBody, wireError } from "./wire.js";

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const DEFAULT_MODEL = "gpt-4o-mini";

export interface OpenAICompatibleOptions {
  /** The API root, e.g. `http://localhost:11434/v1`; a query (Azure's `api-version`) is kept. */
  baseUrl?: string;
  /** Sent as a bearer token; never written anywhere else. Local servers usually need none. */
  apiKey?: string;
  /** The model of nodes that name none. */
  model?: string;
  /** Stream answers (tokens become progress events). Default true. */
  stream?: boolean;
  /** How many times a request is sent again after a 429, a 5xx, a network error or a body that is not JSON. Default 4. */
  maxRetries?: number;
  /** First backoff when the server gives no Retry-After; doubles each time. Default 500 ms. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A Retry-After longer than this fails the call at once instead of holding the node. Default 60 s. */
  maxRetryAfterMs?: number;
  /** A request that receives nothing for this long is abandoned (and retried). Default 5 min. */
  idleTimeoutMs?: number;
}

/**
 * A provider for any server that speaks the chat completions API (OpenAI, Azure-style gateways,
 * vLLM, Ollama, LM Studio). Retries 429 and 5xx answers honouring Retry-After, follows the
 * caller's abort signal, and keeps its API key out of every message it produces.
 */
export class OpenAICompatibleProvider implements ModelProvider {
  readonly description: string;
  readonly #apiKey: string | undefined;
  private readonly endpoint: string;
  private readonly where: string;
  private readonly options: Required<Omit<OpenAICompatibleOptions, "apiKey" | "baseUrl">>;

  constructor(options: OpenAICompatibleOptions = {}) {
    this.#apiKey = options.apiKey || undefined;
    const base = parseBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
    if (!base.pathname.endsWith("/chat/completions")) base.pathname = `${base.pathname.replace(/\/+$/, "")}/chat/completions`;
    this.endpoint = base.href;
    this.where = `${base.origin}${base.pathname}`;
    this.description = `openai-compatible ${base.origin}${base.pathname.replace(/\/chat\/completions$/, "")}`;
    this.options = {
      model: options.model ?? DEFAULT_MODEL,
      stream: options.stream ?? true,
      maxRetries: options.maxRetries ?? 4,
      backoffMs: options.backoffMs ?? 500,
      maxBackoffMs: options.maxBackoffMs ?? 20_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 300_000,
    };
  }

  async complete(request: ModelRequest, info: ModelCallInfo): Promise<ModelResponse> {
    const model = request.model ?? this.options.model;
    const stream = this.options.stream;
    const body = JSON.stringify(requestBody(request, model, stream));
    for (let attempt = 1; ; attempt++) {
      info.signal.throwIfAborted();
      let retry: { why: string; delayMs: number; error: ModelError };
      try {
        return await this.send(body, model, stream, info, attempt);
      } catch (error) {
        if (info.signal.aborted) throw info.signal.reason;
        if (!(error instanceof Retryable)) throw error;
        retry = error;
      }
      if (attempt > this.options.maxRetries) throw retry.error;
      if (retry.delayMs > this.options.maxRetryAfterMs) {
        const { code, message, status, retryAfterMs } = retry.error;
        throw new ModelError(code, `${message}; the server asks to wait ${Math.ceil(retry.delayMs / 1000)} s, longer than the ${Math.round(this.options.maxRetryAfterMs / 1000)} s this provider waits`, status, retryAfterMs);
      }
      info.onRetry?.({ attempt, delayMs: retry.delayMs, why: retry.why });
      await sleep(retry.delayMs, info.signal);
    }
  }

  /** One HTTP exchange; throws Retryable for what another attempt may fix. */
  private async send(body: string, model: string, stream: boolean, info: ModelCallInfo, attempt: number): Promise<ModelResponse> {
    const idle = new IdleTimer(this.options.idleTimeoutMs);
    const signal = AbortSignal.any([info.signal, idle.signal]);
    try {
      let response: Response;
      try {
        response = await fetch(this.endpoint, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: stream ? "text/event-stream, application/json" : "application/json",
            ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}),
          },
          body,
          signal,
        });
      } catch (error) {
        throw this.networkFailure(error, idle, attempt, false);
      }
      idle.touch();
      if (!response.ok) throw await this.httpFailure(response, attempt);
      const type = response.headers.get("content-type") ?? "";
      try {
        if (stream && response.body && !type.includes("application/json")) return await this.readStream(response.body, model, info, idle);
        return this.readJson(await response.text(), model, attempt);
      } catch (error) {
        if (error instanceof ModelError || error instanceof Retryable) throw error;
        throw this.networkFailure(error, idle, attempt, true);
      }
    } finally {
      idle.stop();
    }
  }

  private readJson(text: string, model: string, attempt: number): ModelResponse {
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      // A body cut off on the way (a proxy or a connection that gave up after the headers) is as
      // transient as a dropped stream; JSON of the wrong shape is not, and is not sent again.
      throw new Retryable(this.notJson(text), "the answer was not valid JSON (cut off?)", this.backoff(attempt));
    }
    const error = wireError(value);
    if (error !== undefined) throw new ModelError("MODEL_HTTP", `the model server answered with an error: ${this.clean(error)}`);
    return parseCompletion(value, model);
  }

  private async readStream(body: ReadableStream<Uint8Array>, model: string, info: ModelCallInfo, idle: IdleTimer): Promise<ModelResponse> {
    const answer = new StreamAssembler();
    let done = false;
    for await (const data of sseData(body)) {
      idle.touch();
      if (data.trim() === "[DONE]") {
        done = true;
        break;
      }
      const value = this.parseJson(data);
      const error = wireError(value);
      if (error !== undefined) throw new ModelError("MODEL_HTTP", `the model server reported an error while streaming: ${this.clean(error)}`);
      const text = answer.push(value);
      if (text) info.onToken?.(text);
    }
    // A stream closed before it said the answer was over is a dropped connection, not a short answer.
    if (!done && !answer.finished) throw new StreamCut();
    return answer.result(model);
  }

  private parseJson(text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw this.notJson(text);
    }
  }

  private notJson(text: string): ModelError {
    return new ModelError("MODEL_BAD_RESPONSE", `malformed answer from the model server (not JSON): ${JSON.stringify(this.clean(text.slice(0, 120)))}`);
  }

  private async httpFailure(response: Response, attempt: number): Promise<Error> {
    const text = await response.text().catch(() => "");
    let detail: string;
    try {
      detail = wireError(JSON.parse(text)) ?? text;
    } catch {
      // Not JSON: the text itself is the detail (a proxy's HTML page, as its words).
      detail = /^\s*</.test(text) ? htmlText(text) : text;
    }
    detail = excerpt(this.clean(detail), 200);
    const status = response.status;
    const retryable = status === 429 || status >= 500;
    const asked = retryable ? retryAfterMs(response.headers) : undefined;
    const error = new ModelError("MODEL_HTTP", `the model server at ${this.where} answered ${status}${response.statusText ? ` ${response.statusText}` : ""}${detail ? `: ${detail}` : ""}`, status, asked);
    if (!retryable) return error;
    return new Retryable(error, `the server answered ${status}`, asked ?? this.backoff(attempt));
  }

  /** A request that failed on the way: before the server answered (`answering` false) or while it did. */
  private networkFailure(error: unknown, idle: IdleTimer, attempt: number, answering: boolean): Error {
    if (idle.fired) {
      const ms = this.options.idleTimeoutMs;
      const why = `no data for ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}`;
      return new Retryable(new ModelError("MODEL_NETWORK", `the model server at ${this.where} stopped answering (${why})`), why, this.backoff(attempt));
    }
    const cause = (error as { cause?: unknown }).cause;
    const why = this.clean(cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error));
    const message = answering ? `the model server at ${this.where} dropped the connection mid-answer (${why})` : `cannot reach the model server at ${this.where}: ${why}`;
    return new Retryable(new ModelError("MODEL_NETWORK", message), answering ? `the connection was dropped mid-answer (${why})` : why, this.backoff(attempt));
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.options.maxBackoffMs, this.options.backoffMs * 2 ** (attempt - 1));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** Server text may echo headers or URLs: the key is removed and control characters dropped. */
  private clean(text: string): string {
    // eslint-disable-next-line no-control-regex
    return scrub(text, this.#apiKey ? [this.#apiKey] : []).replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  }
}

class Retryable extends Error {
  constructor(
    readonly error: ModelError,
    readonly why: string,
    readonly delayMs: number,
  ) {
    super(error.message);
  }
}

/** A stream that ended with neither a finish_reason nor `[DONE]`: the answer may be cut short. */
class StreamCut extends Error {
  constructor() {
    super("the stream ended before the answer did: no finish_reason, no [DONE]");
  }
}

/** The words of an HTML page, tags and scripts left out. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** One line of at most `max` characters. */
function excerpt(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Aborts when nothing arrived for `ms`; `touch` on every piece of data. */
class IdleTimer {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  fired = false;

  constructor(private readonly ms: number) {
    this.touch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new Error("idle"));
    }, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.has("retry-after-ms") && Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A value that is not an http(s) URL is not echoed: it may be a key put in the wrong variable,
 * and this message goes into run errors, events and logs.
 */
function parseBaseUrl(value: string): URL {
  const refused = (why: string) => new ModelError("NO_MODEL", `the model base URL ${why} (expected e.g. http://localhost:11434/v1; the value, ${value.length} characters, is not shown in case it is a key)`);
  if (!/^https?:\/\//i.test(value)) throw refused("does not start with http:// or https://");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refused("is not a URL");
  }
  if (url.username || url.password) throw new ModelError("NO_MODEL", "the model base URL must not hold credentials; put the key in PITWALL_LLM_API_KEY");
  return url;
}
