import type { z } from "zod";
import { WorkflowError } from "../errors.js";
import { MAX_TIMER_MS, definitionSchemas, type RetryPolicyInput } from "../graph/definition.js";
import type { CallContext, CallOptions, NodeContext } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";
import { toolCallInput } from "./call-record.js";
import { jsonSchemaOf, zod } from "../zod.js";
import type { ToolSpec } from "./types.js";

/** What a tool's function receives beside its arguments. */
export interface ToolContext extends CallContext {
  readonly runId: string;
  readonly node: string;
}

/**
 * A function a model may call. Tools live in code the operator loads (an actions module's
 * `tools` export, or the engine's `tools` option), never in workflow JSON, which names them.
 */
export interface Tool<A = any, R = unknown> { // eslint-disable-line @typescript-eslint/no-explicit-any
  description: string;
  /** The arguments object: a zod schema, or a JSON Schema. Invalid arguments never reach `run`. */
  parameters: z.ZodType<A> | Record<string, unknown>;
  /** Its result is recorded (so it must be JSON) and shown to the model. */
  run(args: A, ctx: ToolContext): R | Promise<R>;
  /** Retries of one call of this tool. */
  retry?: RetryPolicyInput;
  timeoutMs?: number;
  /**
   * The tool changes nothing (a lookup, as MCP's `readOnlyHint`): after a failed attempt of its
   * node, the next attempt runs it again for a fresh result. Otherwise a call the next attempt
   * repeats with the same arguments (an agent's at any turn) is handed the recorded result, so its
   * side effect happens once.
   */
  readOnly?: boolean;
  /**
   * `false`: its calls never run beside another call of the same agent turn (two writes to one
   * account that must not race): they run after the turn's other calls, one at a time in the
   * model's order. By default a turn's calls run together, as LangGraph's ToolNode runs them.
   */
  concurrent?: boolean;
}

/** Declares a tool with typed arguments: `defineTool({ description, parameters: z.object(...), run })`. */
export function defineTool<S extends z.ZodType, R>(tool: {
  description: string;
  parameters: S;
  run(args: z.output<S>, ctx: ToolContext): R | Promise<R>;
  retry?: RetryPolicyInput;
  timeoutMs?: number;
  readOnly?: boolean;
  concurrent?: boolean;
}): Tool<z.output<S>, R> {
  return tool as Tool<z.output<S>, R>;
}

/** A tool ready to offer: its name, the JSON Schema the model sees, and the validator its arguments pass. */
export interface BoundTool {
  readonly name: string;
  readonly tool: Tool;
  readonly spec: ToolSpec;
  readonly validator: z.ZodType;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks and binds a `tools` export (name → tool); `where` names its source in errors. */
export function bindTools(value: unknown, where: string): Map<string, BoundTool> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new WorkflowError(`${where}: \`tools\` must be an object mapping tool names to tools`);
  }
  const out = new Map<string, BoundTool>();
  for (const [name, tool] of Object.entries(value)) {
    if (!TOOL_NAME.test(name)) throw new WorkflowError(`${where}: tool name "${name}" must be 1-64 letters, digits, '_' or '-'`);
    out.set(name, bindTool(name, tool, where));
  }
  return out;
}

function bindTool(name: string, value: unknown, where: string): BoundTool {
  const tool = value as Partial<Tool> | null;
  const bad = (why: string) => new WorkflowError(`${where}: tool "${name}" ${why}`);
  if (tool === null || typeof tool !== "object") throw bad("must be an object { description, parameters, run }");
  if (typeof tool.run !== "function") throw bad("has no `run` function");
  if (typeof tool.description !== "string" || tool.description.trim() === "") throw bad("needs a `description` (the model reads it)");
  if (tool.parameters === null || typeof tool.parameters !== "object") throw bad("needs `parameters`: a zod schema or a JSON Schema of its arguments object");
  let validator: z.ZodType;
  let parameters: Record<string, unknown>;
  try {
    const z = zod();
    if (tool.parameters instanceof z.ZodType) {
      validator = tool.parameters;
      parameters = jsonSchemaOf(tool.parameters, { io: "input", unrepresentable: "any" });
    } else {
      parameters = tool.parameters;
      validator = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
    }
  } catch (error) {
    throw bad(`has parameters that cannot be used: ${(error as Error).message}`);
  }
  if (parameters.type !== "object") throw bad('must take an object of arguments (parameters of "type": "object")');
  if (tool.timeoutMs !== undefined && !(Number.isInteger(tool.timeoutMs) && tool.timeoutMs >= 1 && tool.timeoutMs <= MAX_TIMER_MS)) {
    throw bad(`has timeoutMs ${tool.timeoutMs}: give whole milliseconds from 1 to ${MAX_TIMER_MS} (about 24.8 days)`);
  }
  for (const flag of ["readOnly", "concurrent"] as const) {
    if (tool[flag] !== undefined && typeof tool[flag] !== "boolean") throw bad(`has ${flag} ${JSON.stringify(tool[flag])}: give true or false`);
  }
  const retry = definitionSchemas().retryPolicySchema.safeParse(tool.retry ?? {});
  if (!retry.success) throw bad(`has a retry policy that cannot be used: ${retry.error.issues.map((i) => `${i.path.join(".") || "retry"}: ${i.message}`).join("; ")}`);
  return { name, tool: tool as Tool, spec: { name, description: tool.description, parameters }, validator };
}

/** Parses and validates arguments the model wrote; a problem is said in words the model can act on. */
export function parseArguments(tool: BoundTool, text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { ok: false, problem: `the arguments for ${tool.name} are not valid JSON: ${JSON.stringify(text.slice(0, 200))}` };
  }
  return checkArguments(tool, value);
}

export function checkArguments(tool: BoundTool, value: unknown): { ok: true; value: unknown } | { ok: false; problem: string } {
  const result = tool.validator.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  const path = issue.path.length > 0 ? ` at ${issue.path.map(String).join(".")}` : "";
  return { ok: false, problem: `invalid arguments for ${tool.name}${path}: ${issue.message}` };
}

/**
 * Runs a tool as a durable call: recorded once it succeeds, and not run again for this node run
 * with the same arguments under the same key — unless it is `readOnly`, also not by an attempt
 * after a failed one, so that a side effect (a refund) happens once however often the node is retried.
 */
export function callTool(ctx: NodeContext, tool: BoundTool, args: unknown, key: string): Promise<unknown> {
  return ctx.call(
    key,
    (call) => tool.tool.run(args, { signal: call.signal, attempt: call.attempt, idempotencyKey: call.idempotencyKey, runId: ctx.runId, node: ctx.node }),
    toolCallOptions(tool, args),
  );
}

/**
 * The result of the same tool call (tool and arguments) made, under any key, before the node's
 * last failure, when no other call of this attempt was handed it: the call is not made again.
 */
export function keptToolCall(ctx: NodeContext, tool: BoundTool, args: unknown, key: string): { call: string; output: unknown } | undefined {
  return (ctx as InternalContext).keptCall(key, toolCallOptions(tool, args));
}

function toolCallOptions(tool: BoundTool, args: unknown): CallOptions {
  const { retry, timeoutMs, readOnly } = tool.tool;
  const input = toolCallInput(tool.name, args);
  return { ...(retry ? { retry } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}), input, dependsOn: input, afterFailure: readOnly ? "again" : "keep" };
}
