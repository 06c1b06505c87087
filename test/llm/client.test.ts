import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelError, OpenAICompatibleProvider, type ModelCallInfo, type ModelRequest } from "../../engine/index.js";
import { ChatServer, chunks, completion } from "../support/chat-server.js";

const KEY = "sk-test-9f8e7d6c5b4a39281706";

function info(overrides: Partial<ModelCallInfo> = {}): ModelCallInfo & { tokens: string[]; retries: { delayMs: number; why: string }[] } {
  const tokens: string[] = [];
  const retries: { delayMs: number; why: string }[] = [];
  return {
    signal: new AbortController().signal,
    runId: "run-1",
    node: "draft",
    call: "model",
    index: null,
    attempt: 1,
    idempotencyKey: "run-1:1:draft/model",
    onToken: (t) => tokens.push(t),
    onRetry: (r) => retries.push({ delayMs: r.delayMs, why: r.why }),
    tokens,
    retries,
    ...overrides,
  };
}

const hello: ModelRequest = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }] };

describe("the OpenAI-compatible client against a chat completions server on loopback", () => {
  let server: ChatServer;
  beforeEach(async () => {
    server = await new ChatServer().start();
  });
  afterEach(async () => server.close());

  const provider = (options: Partial<ConstructorParameters<typeof OpenAICompatibleProvider>[0]> = {}) =>
    new OpenAICompatibleProvider({ baseUrl: server.baseUrl, apiKey: KEY, model: "test-model", backoffMs: 5, ...options });

  it("sends a plain request with the key as a bearer token and reads the answer, usage and model", async () => {
    server.reply({ kind: "json", body: completion({ content: "Hello!", usage: { prompt_tokens: 12, completion_tokens: 3 }, model: "test-model-0613" }) });
    const answer = await provider({ stream: false }).complete(
      { ...hello, tools: [{ name: "lookup", description: "Looks up", parameters: { type: "object", properties: {} } }], temperature: 0.1, maxTokens: 50 },
      info(),
    );
    expect(answer).toEqual({ content: "Hello!", toolCalls: [], model: "test-model-0613", usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 }, finishReason: "stop" });
    const [request] = server.received;
    expect(request!.url).toBe("/v1/chat/completions");
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.body).toEqual({
      model: "test-model",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello" },
      ],
      tools: [{ type: "function", function: { name: "lookup", description: "Looks up", parameters: { type: "object", properties: {} } } }],
      tool_choice: "auto",
      temperature: 0.1,
      max_tokens: 50,
    });
  });

  it("streams text token by token and assembles streamed tool calls", async () => {
    server.reply({ kind: "stream", chunks: chunks({ content: "Hello there, friend.", usage: { prompt_tokens: 7, completion_tokens: 4 } }) });
    const call = info();
    const text = await provider().complete(hello, call);
    expect(call.tokens).toEqual(["Hello ", "there, ", "friend."]);
    expect(text).toMatchObject({ content: "Hello there, friend.", toolCalls: [], usage: { promptTokens: 7, completionTokens: 4, totalTokens: 11 } });
    expect(server.received[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    server.reply({ kind: "stream", chunks: chunks({ toolCalls: [{ id: "call_a", name: "lookupOrder", arguments: { orderId: "A-1001" } }, { id: "call_b", name: "weather", arguments: { city: "Oslo" } }] }) });
    const tools = await provider().complete(hello, info());
    expect(tools.toolCalls).toEqual([
      { id: "call_a", name: "lookupOrder", arguments: '{"orderId":"A-1001"}' },
      { id: "call_b", name: "weather", arguments: '{"city":"Oslo"}' },
    ]);
    expect(tools.finishReason).toBe("tool_calls");
  });

  it("sends tool calls and tool results back in the wire format", async () => {
    server.reply({ kind: "json", body: completion({ content: "Done." }) });
    await provider({ stream: false }).complete(
      {
        messages: [
          { role: "user", content: "Find A-1" },
          { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "lookupOrder", arguments: '{"orderId":"A-1"}' }] },
          { role: "tool", toolCallId: "call_1", content: '{"status":"shipped"}' },
        ],
        toolChoice: { name: "lookupOrder" },
        tools: [{ name: "lookupOrder", description: "d", parameters: { type: "object" } }],
      },
      info(),
    );
    expect(server.received[0]!.body.messages).toEqual([
      { role: "user", content: "Find A-1" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookupOrder", arguments: '{"orderId":"A-1"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: '{"status":"shipped"}' },
    ]);
    expect(server.received[0]!.body.tool_choice).toEqual({ type: "function", function: { name: "lookupOrder" } });
  });

  it("waits as long as Retry-After says after a 429, then sends the request again", async () => {
    server.reply({ kind: "json", status: 429, headers: { "retry-after": "1" }, body: { error: { message: "Rate limit reached" } } }, { kind: "json", body: completion({ content: "ok" }) });
    const call = info();
    const started = Date.now();
    const answer = await provider({ stream: false }).complete(hello, call);
    expect(answer.content).toBe("ok");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(call.retries).toEqual([{ delayMs: 1000, why: "the server answered 429" }]);
    expect(server.received).toHaveLength(2);
  });

  it("fails at once when Retry-After asks for longer than it is willing to wait", async () => {
    server.reply({ kind: "json", status: 429, headers: { "retry-after": "3600" }, body: { error: { message: "Quota exceeded" } } });
    const error = await provider({ stream: false }).complete(hello, info()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).code).toBe("MODEL_HTTP");
    expect((error as Error).message).toMatch(/answered 429 Too Many Requests: Quota exceeded; the server asks to wait 3600 s, longer than the 60 s/);
    expect(server.received).toHaveLength(1);
  });

  it("retries a 500 with backoff, and gives up with the server's message after its retries", async () => {
    server.reply({ kind: "json", status: 500, body: { error: { message: "upstream overloaded" } } }, { kind: "json", body: completion({ content: "recovered" }) });
    const call = info();
    expect((await provider({ stream: false }).complete(hello, call)).content).toBe("recovered");
    expect(call.retries).toHaveLength(1);
    expect(call.retries[0]!.why).toBe("the server answered 500");

    server.fallback = () => ({ kind: "json", status: 503, body: { error: { message: "down for maintenance" } } });
    const error = (await provider({ stream: false, maxRetries: 2 }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(error.code).toBe("MODEL_HTTP");
    expect(error.status).toBe(503);
    expect(error.message).toBe(`the model server at ${server.baseUrl}/chat/completions answered 503 Service Unavailable: down for maintenance`);
    expect(server.received).toHaveLength(2 + 3);
  });

  it("does not retry a request the server refuses (400)", async () => {
    server.reply({ kind: "json", status: 400, body: { error: { message: "model 'nope' does not exist" } } });
    const error = (await provider({ stream: false }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(error.message).toMatch(/answered 400 Bad Request: model 'nope' does not exist$/);
    expect(server.received).toHaveLength(1);
  });

  it("sends again an answer whose body is cut off (not JSON), and says so clearly when it keeps coming cut", async () => {
    const cut = JSON.stringify(completion({ content: "Hello there" })).slice(0, 40);
    server.reply({ kind: "raw", body: cut }, { kind: "json", body: completion({ content: "whole" }) });
    const call = info();
    expect((await provider({ stream: false }).complete(hello, call)).content).toBe("whole");
    expect(call.retries.map((r) => r.why)).toEqual(["the answer was not valid JSON (cut off?)"]);

    server.fallback = () => ({ kind: "raw", body: "<html>502 Bad Gateway</html>" });
    const plain = (await provider({ stream: false, maxRetries: 1 }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(plain.code).toBe("MODEL_BAD_RESPONSE");
    expect(plain.message).toBe('malformed answer from the model server (not JSON): "<html>502 Bad Gateway</html>"');
    expect(server.received).toHaveLength(2 + 2);
  });

  it("reports well-formed JSON that is not a completion, and a streamed event that is not JSON, without retrying", async () => {
    server.reply({ kind: "json", body: { choices: [] } });
    const empty = (await provider({ stream: false }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(empty.code).toBe("MODEL_BAD_RESPONSE");
    expect(empty.message).toMatch(/^malformed answer from the model server at choices: /);

    server.reply({ kind: "raw", contentType: "text/event-stream", body: 'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\ndata: {not json\n\n' });
    const streamed = (await provider().complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(streamed.code).toBe("MODEL_BAD_RESPONSE");
    expect(streamed.message).toBe('malformed answer from the model server (not JSON): "{not json"');
    expect(server.received).toHaveLength(2);
  });

  it("cancels a request that hangs when the signal is aborted", async () => {
    server.reply({ kind: "hang" });
    const controller = new AbortController();
    const pending = provider().complete(hello, info({ signal: controller.signal }));
    await until(() => server.received.length === 1);
    const reason = new Error("killed by operator");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("abandons a request that receives nothing for its idle timeout, and sends it again", async () => {
    server.reply({ kind: "hang" }, { kind: "json", body: completion({ content: "second try" }) });
    const call = info();
    const answer = await provider({ stream: false, idleTimeoutMs: 200 }).complete(hello, call);
    expect(answer.content).toBe("second try");
    expect(call.retries.map((r) => r.why)).toEqual(["no data for 200 ms"]);
  });

  it("counts a stream that ends before the answer does (no finish_reason, no [DONE]) as a dropped connection", async () => {
    const cut = chunks({ content: "The refund is approved and" }).slice(0, 4);
    server.reply({ kind: "stream", chunks: cut, done: false }, { kind: "stream", chunks: chunks({ content: "The refund is approved." }) });
    const call = info();
    expect((await provider().complete(hello, call)).content).toBe("The refund is approved.");
    expect(call.retries.map((r) => r.why)).toEqual(["the connection was dropped mid-answer (the stream ended before the answer did: no finish_reason, no [DONE])"]);

    server.fallback = () => ({ kind: "stream", chunks: cut, done: false });
    const error = (await provider({ maxRetries: 1 }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect([error.code, error.message]).toEqual([
      "MODEL_NETWORK",
      `the model server at ${server.baseUrl}/chat/completions dropped the connection mid-answer (the stream ended before the answer did: no finish_reason, no [DONE])`,
    ]);
    // A finish_reason says the answer is whole, [DONE] or not.
    server.reply({ kind: "stream", chunks: chunks({ content: "Whole." }), done: false });
    expect((await provider().complete(hello, info())).content).toBe("Whole.");
  });

  it("says a connection closed in the middle of a streamed answer was dropped, not unreachable", async () => {
    server.reply({ kind: "drop", chunks: chunks({ content: "partial answer" }).slice(0, 2) });
    const error = (await provider({ maxRetries: 0 }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(error.code).toBe("MODEL_NETWORK");
    expect(error.message).toMatch(new RegExp(`^the model server at ${server.baseUrl}/chat/completions dropped the connection mid-answer \\(.+\\)$`));
  });

  it("shows an HTML error page as a short line of its words", async () => {
    const page = `<html><head><style>body { color: red }</style></head><body><h1>500 Internal Server Error</h1>\n<p>upstream exploded</p>${"<p>padding</p>".repeat(100)}</body></html>`;
    server.fallback = () => ({ kind: "raw", status: 500, contentType: "text/html", body: page });
    const error = (await provider({ stream: false, maxRetries: 0 }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    const prefix = `the model server at ${server.baseUrl}/chat/completions answered 500 Internal Server Error: `;
    expect(error.message.startsWith(`${prefix}500 Internal Server Error upstream exploded padding padding`)).toBe(true);
    expect(error.message.slice(prefix.length)).toHaveLength(200);
    expect(error.message).toMatch(/…$/);
    expect(error.message).not.toMatch(/[<>\n]/);
  });

  it("keeps the server's Retry-After on the error it gives up with, for the node's own retry", async () => {
    server.fallback = () => ({ kind: "json", status: 429, headers: { "retry-after": "120" }, body: { error: { message: "quota" } } });
    const tooLong = (await provider({ stream: false }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect([tooLong.status, tooLong.retryAfterMs]).toEqual([429, 120_000]);
    server.fallback = () => ({ kind: "json", status: 503, headers: { "retry-after": "2" }, body: { error: { message: "busy" } } });
    const spent = (await provider({ stream: false, maxRetries: 0 }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect([spent.status, spent.retryAfterMs]).toEqual([503, 2000]);
  });

  it("never echoes a base URL that is not one: it may be a key in the wrong variable", () => {
    const secret = "sk-SECRETKEY123456";
    for (const value of [secret, `sk-proj:${secret}`, `http//${secret}`]) {
      const error = (() => {
        try {
          new OpenAICompatibleProvider({ baseUrl: value });
        } catch (e) {
          return e as ModelError;
        }
      })()!;
      expect(error.code).toBe("NO_MODEL");
      expect(error.message).toBe(
        `the model base URL does not start with http:// or https:// (expected e.g. http://localhost:11434/v1; the value, ${value.length} characters, is not shown in case it is a key)`,
      );
    }
  });

  it("never puts the API key in an error, even when the server echoes it back", async () => {
    server.fallback = (request) => ({ kind: "json", status: 401, body: { error: { message: `Incorrect API key provided: ${String(request.headers.authorization)}` } } });
    const error = (await provider({ stream: false }).complete(hello, info()).catch((e: unknown) => e)) as ModelError;
    expect(error.message).toContain("Incorrect API key provided: Bearer [redacted]");
    expect(JSON.stringify({ message: error.message, stack: error.stack })).not.toContain(KEY);

    const baseUrl = server.baseUrl;
    const port = Number(new URL(baseUrl).port);
    await server.close();
    const unreachable = (await new OpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1?key=${KEY}`, apiKey: KEY, maxRetries: 0 })
      .complete(hello, info())
      .catch((e: unknown) => e)) as ModelError;
    expect(unreachable.code).toBe("MODEL_NETWORK");
    expect(unreachable.message).toBe(`cannot reach the model server at http://127.0.0.1:${port}/v1/chat/completions: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(`${unreachable.message} ${unreachable.stack}`).not.toContain(KEY);
    expect(() => new OpenAICompatibleProvider({ baseUrl: `http://user:${KEY}@127.0.0.1/v1` })).toThrow(/must not hold credentials/);
    expect(new OpenAICompatibleProvider({ baseUrl, apiKey: KEY }).description).toBe(`openai-compatible ${baseUrl}`);
  });
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error("condition not met");
}
