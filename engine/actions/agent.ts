import type { AgentNodeDefinition } from "../graph/definition.js";
import type { NodeContext, NodeFunction } from "../graph/model.js";
import { ask } from "../llm/ask.js";
import { acceptAnswer, answerValidator, baseRequest, openingMessages } from "../llm/prompt.js";
import { templateScope } from "../llm/template.js";
import type { ModelServices } from "../llm/services.js";
import { callTool, checkArguments, keptToolCall, parseArguments, type BoundTool } from "../llm/tools.js";
import type { ChatMessage, ToolCall } from "../llm/types.js";
import type { InternalContext } from "../runtime/context.js";
import { restoreHidden } from "../runtime/redact.js";

export class AgentTurnsError extends Error {
  readonly code = "MAX_TURNS";
  constructor(node: string, turns: number) {
    super(`agent "${node}" gave no final answer within ${turns} turns (maxTurns); raise maxTurns or narrow its task`);
    this.name = "AgentTurnsError";
  }
}

/**
 * The agent loop: the model picks tools until it answers. Every answer (`model-<turn>`) and
 * every tool call (`tool-<turn>-<name>`) is a durable call, so a node that runs again — after a
 * crash, or after an operator answered an approval — replays what was recorded up to the last
 * finished call and goes on from there, never running a finished tool twice. A changed prompt
 * (the state edited) asks the model again from that turn on. A retry after a failed attempt
 * starts the conversation over (see DurableCalls), but a tool call the model repeats with the
 * same arguments, at any turn, is handed its recorded result, not run again (keptResult). The
 * tool calls of one turn run together, once each has the approval it needs (but those of tools
 * declared `concurrent: false`, see runTurn).
 */
export function agentNode(def: AgentNodeDefinition, services: ModelServices): NodeFunction {
  const validator = answerValidator(def.schema);
  const approval: Approval = { tools: new Set(def.requireApproval ?? []), deadline: def.approvalDeadline };
  return async (state, ctx) => {
    const provider = services.model(ctx.node);
    const tools = new Map(def.tools.map((name) => [name, services.tool(name, ctx.node)]));
    const messages: ChatMessage[] = openingMessages(def, templateScope(def.map !== undefined, state, ctx), def.prompt, def.schema);
    for (let turn = 1; turn <= def.maxTurns; turn++) {
      const { response, value } = await ask(ctx, provider, {
        key: `model-${turn}`,
        request: { ...baseRequest(def), messages: [...messages], tools: [...tools.values()].map((t) => t.spec) },
        accept: (r) => (r.toolCalls.length > 0 ? null : acceptAnswer(r, validator)),
        attempts: def.modelAttempts,
      });
      messages.push({ role: "assistant", content: response.content, ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}) });
      if (response.toolCalls.length === 0) return { [def.output]: value };
      const seen = new Map<string, number>();
      const keyed = response.toolCalls.map((call) => {
        const n = (seen.get(call.name) ?? 0) + 1;
        seen.set(call.name, n);
        return { call, key: `tool-${turn}-${call.name}${n > 1 ? `-${n}` : ""}` };
      });
      // The approvals one by one, in the model's order (each may pause the run); then the calls.
      const ready: (string | ReadyCall)[] = [];
      for (const { call, key } of keyed) ready.push(await prepareCall(ctx, tools, approval, call, key));
      const results = await runTurn(ctx, ready, def.toolErrors ?? "fail");
      keyed.forEach(({ call }, i) => messages.push({ role: "tool", toolCallId: call.id, content: results[i]! }));
    }
    throw new AgentTurnsError(ctx.node, def.maxTurns);
  };
}

/** The tools whose calls an operator approves, and what the answer is when nobody does in time. */
interface Approval {
  tools: ReadonlySet<string>;
  deadline: AgentNodeDefinition["approvalDeadline"];
}

/** A tool call cleared to run: the tool, its arguments (an operator's edit included) and what the model is told of the edit. */
interface ReadyCall {
  tool: BoundTool;
  args: unknown;
  key: string;
  note: string;
}

/**
 * Checks one tool call the model asked for and asks for its approval when it needs one. Mistakes
 * the model can fix (an unknown tool, bad arguments) and an operator's rejection, with its reason,
 * are the text the model reads back instead of a result; so is the result of the same call made
 * before the node's last failure, which is not made again (`keptResult`).
 */
async function prepareCall(ctx: NodeContext, tools: ReadonlyMap<string, BoundTool>, approval: Approval, call: ToolCall, key: string): Promise<string | ReadyCall> {
  const tool = tools.get(call.name);
  if (!tool) return `Error: there is no tool "${call.name}"; the tools are ${[...tools.keys()].join(", ")}.`;
  const parsed = parseArguments(tool, call.arguments);
  if (!parsed.ok) return `Error: ${parsed.problem}.`;
  const needsApproval = approval.tools.has(tool.name);
  const kept = keptResult(ctx, tool, parsed.value, key, "");
  if (kept !== undefined) {
    // Its approval stands: nobody is asked again, and the questions after it keep their ids.
    if (needsApproval) (ctx as InternalContext).skipInterrupt();
    return kept;
  }
  if (!needsApproval) return { tool, args: parsed.value, key, note: "" };
  const approved = await askApproval(ctx, tool, parsed.value, key, approval.deadline);
  if (typeof approved === "string") return approved;
  // The arguments an operator gave may be those of a call made before the failure.
  return (approved.args !== parsed.value && keptResult(ctx, tool, approved.args, key, approved.note)) || approved;
}

/** Asks an operator whether the call runs; a rejection is what the model reads back. */
async function askApproval(ctx: NodeContext, tool: BoundTool, args: unknown, key: string, deadline: Approval["deadline"]): Promise<string | ReadyCall> {
  const answer = await ctx.interrupt({
    question: `The agent in "${ctx.node}" wants to call ${tool.name}. Run it?`,
    data: { tool: tool.name, arguments: args },
    decisions: ["approve", "reject", "edit"],
    responseSchema: tool.spec.parameters,
    // Approving one call never approves another, also when the operator edited the state with the answer.
    exact: true,
    ...(deadline ? { deadline } : {}),
  });
  const because = answer.reason ? ` Reason: ${answer.reason}` : "";
  if (answer.timedOut && answer.decision === "reject") {
    ctx.log.info(`nobody answered the approval of ${tool.name} in time`, { call: key, tool: tool.name });
    return `Not run: nobody approved this call in time.${because}`;
  }
  if (answer.decision === "reject") {
    ctx.log.info(`${answer.actor} rejected ${tool.name}`, { call: key, tool: tool.name });
    return `Not run: ${answer.actor} rejected this call.${because}`;
  }
  // Arguments given with the answer are what runs, whether the decision was `edit` or `approve`.
  if (answer.response === undefined) return { tool, args, key, note: "" };
  // The operator saw the arguments with secrets hidden: what they left hidden stays as the model gave it.
  const edited = checkArguments(tool, restoreHidden(answer.response, args));
  if (!edited.ok) throw Object.assign(new Error(`the arguments ${answer.actor} gave for ${tool.name} are invalid: ${edited.problem}`), { code: "BAD_EDIT" });
  const note = JSON.stringify(edited.value) !== JSON.stringify(args) ? `(${answer.actor} changed the arguments to ${JSON.stringify(edited.value)} before it ran.${because}) ` : "";
  return { tool, args: edited.value, key, note };
}

/**
 * The result of the same call (tool and arguments) made before the node's last failure, at this
 * turn or another, that no other call of this attempt was handed — as Temporal hands a retried
 * workflow its completed activities — so a refund the model asks for again is not made twice.
 * A `readOnly` tool has none: it runs again for a fresh result.
 */
function keptResult(ctx: NodeContext, tool: BoundTool, args: unknown, key: string, note: string): string | undefined {
  const kept = keptToolCall(ctx, tool, args, key);
  if (!kept) return undefined;
  ctx.log.info(`${tool.name} was not run again: ${kept.call} ran it before the node's last failure`, { call: key, tool: tool.name, from: kept.call });
  return resultText(note, kept.output);
}

/** Runs a cleared call; its result (or, with `tell-model`, its failure) is the text the model reads back. */
async function runCall(ctx: NodeContext, { tool, args, key, note }: ReadyCall, toolErrors: "fail" | "tell-model"): Promise<string> {
  let result: unknown;
  try {
    result = await callTool(ctx, tool, args, key);
  } catch (error) {
    // A node being stopped is not the tool's failure.
    if (toolErrors === "fail" || ctx.signal.aborted) throw error;
    const message = (error as Error).message;
    ctx.log.warn(`${tool.name} failed; the model is told: ${message}`, { call: key, tool: tool.name });
    return `${note}Error: ${tool.name} failed: ${message}`;
  }
  return resultText(note, result);
}

/** A tool's result as the model reads it, after what it is told of an operator's edit. */
function resultText(note: string, result: unknown): string {
  return `${note}${JSON.stringify(result ?? null)}`;
}

/**
 * Runs a turn's cleared calls and gives what the model reads back, in its order. They run
 * together, but for those of tools declared `concurrent: false`, which then run one at a time in
 * the model's order: after the others, so that the turn's lookups read what the model saw when
 * it asked, and no such write is made once another call of the turn failed the node.
 */
async function runTurn(ctx: NodeContext, ready: readonly (string | ReadyCall)[], toolErrors: "fail" | "tell-model"): Promise<string[]> {
  const together = await allInOrder(ready.map((r) => (typeof r === "string" || r.tool.tool.concurrent === false ? r : runCall(ctx, r, toolErrors))));
  const results: string[] = [];
  for (const r of together) results.push(typeof r === "string" ? r : await runCall(ctx, r, toolErrors));
  return results;
}

/**
 * Waits for every call of a turn run together, so that none is left running (and canceled with
 * its node) when another fails; then fails with the first failure in the model's order.
 */
async function allInOrder<T>(results: readonly (T | Promise<T>)[]): Promise<T[]> {
  const settled = await Promise.allSettled(results);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}
