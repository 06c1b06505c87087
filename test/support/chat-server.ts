import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, beforeEach } from "vitest";
import type { AddressInfo } from "node:net";

/** What the fake server does with one request. */
export type Reply =
  | { kind: "json"; body: unknown; status?: number; headers?: Record<string, string> }
  | { kind: "stream"; chunks: unknown[]; done?: boolean }
  /** Streams the chunks, then destroys the socket mid-answer. */
  | { kind: "drop"; chunks: unknown[] }
  | { kind: "raw"; body: string; status?: number; contentType?: string; headers?: Record<string, string> }
  | { kind: "hang" };

export interface Received {
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
  url: string;
}

interface AnswerShape {
  content?: string | null;
  toolCalls?: { id?: string; name: string; arguments: unknown }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  model?: string;
}

/** A chat completion body as OpenAI sends it. */
export function completion(answer: AnswerShape): unknown {
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    model: answer.model ?? "test-model",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: answer.content ?? null,
          ...(answer.toolCalls
            ? {
                tool_calls: answer.toolCalls.map((c, i) => ({
                  id: c.id ?? `call_${i}`,
                  type: "function",
                  function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
                })),
              }
            : {}),
        },
        finish_reason: answer.toolCalls ? "tool_calls" : "stop",
      },
    ],
    usage: answer.usage ? { ...answer.usage, total_tokens: answer.usage.prompt_tokens + answer.usage.completion_tokens } : { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** The same answer as stream chunks: text word by word, tool call arguments in two pieces, usage last. */
export function chunks(answer: AnswerShape): unknown[] {
  const model = answer.model ?? "test-model";
  const out: unknown[] = [{ model, choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] }];
  for (const word of answer.content?.match(/\S+\s*/g) ?? []) out.push({ model, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
  (answer.toolCalls ?? []).forEach((c, i) => {
    const args = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments);
    const half = Math.floor(args.length / 2);
    out.push({ model, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: c.id ?? `call_${i}`, type: "function", function: { name: c.name, arguments: args.slice(0, half) } }] }, finish_reason: null }] });
    out.push({ model, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] }, finish_reason: null }] });
  });
  out.push({ model, choices: [{ index: 0, delta: {}, finish_reason: answer.toolCalls ? "tool_calls" : "stop" }] });
  const usage = answer.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  out.push({ model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
  return out;
}

/**
 * A real HTTP server on loopback that speaks the chat completions wire format. Replies are
 * queued per test; when the queue is empty, `fallback` answers. Every request is kept.
 */
export class ChatServer {
  readonly received: Received[] = [];
  private readonly queue: Reply[] = [];
  private server: Server | undefined;
  private readonly open = new Set<ServerResponse>();
  fallback: (request: Received) => Reply = () => ({ kind: "json", status: 500, body: { error: { message: "no reply queued" } } });

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return this;
  }

  reply(...replies: Reply[]): this {
    this.queue.push(...replies);
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = "";
    for await (const chunk of req) text += chunk;
    const request: Received = { headers: req.headers, body: JSON.parse(text) as Record<string, unknown>, url: req.url ?? "" };
    this.received.push(request);
    const reply = this.queue.shift() ?? this.fallback(request);
    this.open.add(res);
    res.on("close", () => this.open.delete(res));
    switch (reply.kind) {
      case "json":
        res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
        res.end(JSON.stringify(reply.body));
        return;
      case "raw":
        res.writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "application/json", ...reply.headers });
        res.end(reply.body);
        return;
      case "stream":
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const chunk of reply.chunks) {
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (reply.done !== false) res.write("data: [DONE]\n\n");
        res.end();
        return;
      case "drop":
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const chunk of reply.chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        res.destroy();
        return;
      case "hang":
        return;
    }
  }
}

/**
 * A server of its own for each test of the enclosing suite: started before each, closed after.
 * The object returned stands for the current test's server.
 */
export function chatServerEach(): ChatServer {
  let current: ChatServer | undefined;
  beforeEach(async () => {
    current = await new ChatServer().start();
  });
  afterEach(async () => current?.close());
  return new Proxy({} as ChatServer, {
    get(_target, key) {
      if (!current) throw new Error("the chat server is started before each test");
      const value = Reflect.get(current, key, current) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
    set(_target, key, value) {
      if (!current) throw new Error("the chat server is started before each test");
      return Reflect.set(current, key, value, current);
    },
  });
}
