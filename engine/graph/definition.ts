import type { z } from "zod";
import { lazily, zod, type Zod } from "../zod.js";
import { MAX_DEADLINE_SECONDS } from "../runtime/deadlines.js";
import type { StateKeyDefinition } from "../state/schema.js";

/** The name of the graph's end; a route or `next` may point at it. */
export const END = "END";

/**
 * Names JavaScript objects hold already (`constructor`, `toString`, and `__proto__`, which sets an
 * object's prototype instead of adding a key): a node, state key or route named so would be
 * mistaken for them.
 */
export function reservedName(name: string): boolean {
  return Object.hasOwn(Object.prototype, name);
}

/**
 * A character in a name that a person cannot see or that changes how text around it is shown — a
 * control character, a zero-width or bidirectional mark (`send` and `send\u202e` look alike) — as
 * `U+XXXX`, or undefined when there is none.
 */
export function hiddenCharacter(name: string): string | undefined {
  const found = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.exec(name)?.[0];
  return found === undefined ? undefined : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Why a name with a hidden character is refused. */
export function hiddenCharacterProblem(what: string, name: string, character: string): string {
  return `${what} ${JSON.stringify(name)} holds ${character}, a character people cannot see (or that reorders what they see): operators could not tell it from another name`;
}

export const RESERVED_NAME_PROBLEM = "is a name JavaScript objects hold already (like constructor, toString, __proto__): choose another";

export const DECISIONS = ["approve", "reject", "edit"] as const;
export type ApprovalDecision = (typeof DECISIONS)[number];
/** What an approval's deadline may decide. */
const DEADLINE_DECISIONS = ["approve", "reject"] as const;
/** The route an approval answered by its deadline follows, when it has one; and a signal's wait that timed out. */
export const TIMEOUT_ROUTE = "timeout";
/** The route a signal's wait takes when the signal came (its other route: `timeout`). */
export const RECEIVED_ROUTE = "received";

/** The longest delay a timer can hold (setTimeout's limit, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The schemas of a workflow file's parts. Built at their first use (`definitionSchemas`), not as
 * this module loads: a command that compiles no workflow never pays for them (zod.ts).
 */
function buildSchemas(z: Zod) {
  const timerMs = (what: string) => z.number().max(MAX_TIMER_MS, `${what} is at most ${MAX_TIMER_MS} ms (about 24.8 days)`);
  const nodeName = z.string().min(1);

  const retryPolicySchema = z
    .object({
      maxAttempts: z.number().int().min(1).default(1),
      backoffMs: timerMs("backoffMs").min(0).default(200),
      factor: z.number().min(1).default(2),
      maxBackoffMs: timerMs("maxBackoffMs").min(0).default(30_000),
      jitter: z.number().min(0).max(1).default(0.2),
      /** Error names or codes that are retried; empty or absent means every error. */
      retryOn: z.array(z.string()).optional(),
      /** What happens when attempts run out: pause for an operator (default) or fail the run. */
      onExhausted: z.enum(["pause", "fail"]).default("pause"),
    })
    .strict();

  const mapSchema = z
    .object({
      /** A state key holding an array: one task per item. */
      over: z.string().min(1),
      /** For sub-workflow nodes: the child state key that receives the item (default `item`). */
      as: z.string().min(1).optional(),
      concurrency: z.number().int().min(1).optional(),
    })
    .strict();

  /**
   * Where a node goes when it fails for good (its retries spent, or its error one it does not
   * retry) instead of pausing the run or failing it: AWS Step Functions' Catch. The failure is
   * written to `output` when given.
   */
  const catchSchema = z
    .object({
      next: z.union([nodeName, z.array(nodeName).min(1)]),
      /** Error names or codes it catches; absent or empty means every error. */
      on: z.array(z.string().min(1)).optional(),
      /** A state key that receives the failure: `{ node, code?, name, message, attempts, index? }`, or its message on a string key. */
      output: z.string().min(1).optional(),
      /**
       * Mapped nodes: how many items may fail (a count, or `"10%"` of the items) with the node going on
       * along its own edges, their failures still caught; past it, the node goes where its catch leads
       * (Step Functions' tolerated failures). Absent: none.
       */
      tolerate: z.union([z.number().int().min(0), z.string().refine((text) => /^(100(\.0+)?|\d{1,2}(\.\d+)?)%$/.test(text), { error: (issue) => `${JSON.stringify(issue.input)}: give a percentage of the items up to 100%, such as "10%", or a count` })]).optional(),
    })
    .strict();


  /** Fields every node kind shares: edges, routing, retries, timeouts, delivery, dynamic fan-out. */
  const commonFields = {
    description: z.string().optional(),
    next: z.union([nodeName, z.array(nodeName).min(1)]).optional(),
    /** Route key → a node, or a list of nodes that then run in parallel (a conditional fan-out). */
    routes: z.record(z.string().min(1), z.union([nodeName, z.array(nodeName).min(1)])).optional(),
    default: nodeName.optional(),
    routeOn: z.string().min(1).optional(),
    /** Code workflows only: a router function chooses the route key. Marked here so the graph can say so. */
    router: z.boolean().optional(),
    waitFor: z.array(nodeName).min(1).optional(),
    retry: retryPolicySchema.optional(),
    catch: catchSchema.optional(),
    timeoutMs: timerMs("timeoutMs").int().min(1).optional(),
    atMostOnce: z.boolean().optional(),
    map: mapSchema.optional(),
  };

  /** When nobody has answered an approval `seconds` after it was asked, a worker answers `decision`. */
  const deadlineField = z
    .object({
      seconds: z.number().gt(0, "above 0").max(MAX_DEADLINE_SECONDS, "at most 100 years (3,153,600,000 seconds)"),
      // Not edit: nobody edits when nobody answers.
      decision: z.enum(DEADLINE_DECISIONS),
    })
    .strict();

  const actionNode = z.object({ kind: z.literal("action").default("action"), action: z.string().min(1), ...commonFields }).strict();
  const approvalNode = z
    .object({
      kind: z.literal("approval"),
      question: z.string().min(1),
      show: z.array(z.string().min(1)).optional(),
      decisions: z.array(z.enum(DECISIONS)).min(1).default([...DECISIONS]),
      /**
       * Nobody has answered `seconds` after the question was asked: a worker answers `decision`, and
       * the run follows the `timeout` route if the node has one, else that decision's.
       */
      deadline: deadlineField.optional(),
      ...commonFields,
    })
    .strict();
  const waitNode = z
    .object({
      kind: z.literal("wait"),
      // Beyond 100 years a wake time is no longer a date (and is surely a mistake).
      seconds: z.number().min(0).max(100 * 365 * 24 * 3600, "at most 100 years (3,153,600,000 seconds)").optional(),
      until: z.iso.datetime({ offset: true, error: (issue) => untilProblem(issue.input) }).optional(),
      /** Waits for a signal of this name sent to the run (`pitwall signal RUN NAME`); with `seconds`, that long at most. */
      signal: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, "letters, digits, '.', '_', ':' and '-' (at most 128)").optional(),
      /** With `signal`: the state key the signal's data is written to. */
      output: z.string().min(1).optional(),
      ...commonFields,
    })
    .strict()
    .refine((n) => (n.until !== undefined ? 1 : 0) + (n.seconds !== undefined || n.signal !== undefined ? 1 : 0) === 1, {
      message: "a wait node needs exactly one of `seconds`, `until` or `signal` (a `signal` with `seconds` waits that long at most)",
    })
    .refine((n) => n.signal === undefined || n.seconds === undefined || n.seconds > 0, { message: "a signal's wait of 0 seconds waits for nothing: give more, or leave `seconds` out", path: ["seconds"] })
    .refine((n) => n.output === undefined || n.signal !== undefined, { message: "`output` is where a signal's data goes: only a wait for a `signal` has it", path: ["output"] });

  const subgraphNode = z
    .object({
      kind: z.literal("subgraph"),
      /** In files: a path relative to the file, or the child definition inline. Canonically: its version. */
      workflow: z.union([z.string().min(1), z.record(z.string(), z.unknown())]),
      /** Canonical form only: the child's name, for drawing. */
      workflowName: z.string().optional(),
      /** child state key ← parent state key; default: every key both share. */
      input: z.record(z.string(), z.string()).optional(),
      /** parent state key ← child state key; default: every key both share. */
      output: z.record(z.string(), z.string()).optional(),
      ...commonFields,
    })
    .strict();

  /** Fields of every model-backed node (llm, tool, agent). */
  const modelFields = {
    /** Absent: the provider's default model. */
    model: z.string().min(1).optional(),
    /** A system message; a template over the state like the prompt. */
    system: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().min(1).optional(),
    /** How many times in all a model answer the node cannot use (bad JSON, bad arguments, not an option) is asked for. */
    modelAttempts: z.number().int().min(1).max(10).default(3),
  };
  const jsonSchemaField = z.record(z.string(), z.unknown());

  const llmNode = z
    .object({
      kind: z.literal("llm"),
      /** A template: `{{ path }}` inserts a state value. */
      prompt: z.string().min(1),
      /** The state key the answer is written to. */
      output: z.string().min(1),
      /** When given, the answer must be JSON matching this JSON Schema; otherwise it is text. */
      schema: jsonSchemaField.optional(),
      ...modelFields,
      ...commonFields,
    })
    .strict();
  const toolNode = z
    .object({
      kind: z.literal("tool"),
      /** The tool, by the name a loaded module exports it under. */
      tool: z.string().min(1),
      /** A template telling the model what to call the tool for; it fills in the arguments. */
      instruction: z.string().min(1),
      /** The state key the tool's result is written to. */
      output: z.string().min(1).optional(),
      /** The model classifies the tool's result into one of these; it becomes the route key. */
      outputOptions: z.array(z.string().min(1)).min(2).optional(),
      /** What the classification should decide (default: which option fits the result). */
      classify: z.string().min(1).optional(),
      ...modelFields,
      ...commonFields,
    })
    .strict();
  const agentNode = z
    .object({
      kind: z.literal("agent"),
      prompt: z.string().min(1),
      /** Tools the model may call, by name. */
      tools: z.array(z.string().min(1)).min(1),
      /** Tools that run only once an operator approved (or edited) the call. */
      requireApproval: z.array(z.string().min(1)).optional(),
      /** When nobody has answered a tool call's approval in time: approved, or rejected (the model is told). */
      approvalDeadline: deadlineField.optional(),
      /** The state key the final answer is written to. */
      output: z.string().min(1),
      schema: jsonSchemaField.optional(),
      /** Model turns before the agent gives up (each turn may call several tools). */
      maxTurns: z.number().int().min(1).max(100).default(10),
      /**
       * A tool that fails past its own retries: `fail` (default) fails the node, which its retry
       * policy or an operator retries; `tell-model` hands the error to the model as the call's
       * result, so it can try something else (LangGraph's ToolNode does so).
       */
      toolErrors: z.enum(["fail", "tell-model"]).optional(),
      ...modelFields,
      ...commonFields,
    })
    .strict();


  const nodeSchemas = {
    action: actionNode,
    approval: approvalNode,
    wait: waitNode,
    subgraph: subgraphNode,
    llm: llmNode,
    tool: toolNode,
    agent: agentNode,
  } satisfies Record<NodeKind, z.ZodType>;

  const limitsSchema = z
    .object({
      maxSteps: z.number().int().min(1).default(1000),
      concurrency: z.number().int().min(1).default(8),
      /** A run not ended this long after it was made is canceled (by a worker, as actor `timeout`). */
      deadlineSeconds: z.number().gt(0, "above 0").max(MAX_DEADLINE_SECONDS, "at most 100 years (3,153,600,000 seconds)").optional(),
      /**
       * At most this many runs of the workflow (every version of its name together) running at
       * once, across every worker of the store; the rest stay queued (`ClaimOptions.runsAtOnce`).
       */
      runsAtOnce: z.number().int().min(1).optional(),
    })
    .strict();

  return { retryPolicySchema, mapSchema, catchSchema, nodeSchemas, limitsSchema };
}

type Schemas = ReturnType<typeof buildSchemas>;
type NodeSchemas = Schemas["nodeSchemas"];

export const definitionSchemas = lazily(() => buildSchemas(zod()));

export type RetryPolicy = z.output<Schemas["retryPolicySchema"]>;
export type RetryPolicyInput = z.input<Schemas["retryPolicySchema"]>;
export type MapSpec = z.output<Schemas["mapSchema"]>;
export type CatchSpec = z.output<Schemas["catchSchema"]>;
export type ActionNodeDefinition = z.output<NodeSchemas["action"]>;
export type ApprovalNodeDefinition = z.output<NodeSchemas["approval"]>;
export type WaitNodeDefinition = z.output<NodeSchemas["wait"]>;
export type SubgraphNodeDefinition = z.output<NodeSchemas["subgraph"]>;
export type LlmNodeDefinition = z.output<NodeSchemas["llm"]>;
export type ToolNodeDefinition = z.output<NodeSchemas["tool"]>;
export type AgentNodeDefinition = z.output<NodeSchemas["agent"]>;
export type ModelNodeDefinition = LlmNodeDefinition | ToolNodeDefinition | AgentNodeDefinition;
export type NodeDefinition =
  | ActionNodeDefinition
  | ApprovalNodeDefinition
  | WaitNodeDefinition
  | SubgraphNodeDefinition
  | ModelNodeDefinition;
export type NodeDefinitionInput =
  | z.input<NodeSchemas["action"]>
  | z.input<NodeSchemas["approval"]>
  | z.input<NodeSchemas["wait"]>
  | z.input<NodeSchemas["subgraph"]>
  | z.input<NodeSchemas["llm"]>
  | z.input<NodeSchemas["tool"]>
  | z.input<NodeSchemas["agent"]>;
export type Limits = z.output<Schemas["limitsSchema"]>;

/** Whether `failed` of a mapped node's `items` stay within its catch's tolerance (so it goes on along its own edges). */
export function withinTolerance(spec: CatchSpec | undefined, failed: number, items: number): boolean {
  const tolerate = spec?.tolerate;
  if (tolerate === undefined || failed === 0) return failed === 0;
  return typeof tolerate === "number" ? failed <= tolerate : failed * 100 <= Number.parseFloat(tolerate) * items;
}

/**
 * Why a wait's `until` is not a moment: a date and time without its offset names a different
 * moment in every time zone, so it must say which (Z for UTC).
 */
function untilProblem(input: unknown): string {
  if (typeof input !== "string") return "`until` is an ISO date-time with a UTC offset, as a string (2026-12-01T09:00:00Z)";
  const local = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(:\d{2}(\.\d+)?)?)$/.exec(input);
  if (/^\d{4}-\d{2}-\d{2}$/.test(input)) return `${JSON.stringify(input)} has no time: give the moment with its UTC offset, e.g. ${input}T09:00:00Z (UTC) or ${input}T09:00:00+01:00`;
  if (local) return `${JSON.stringify(input)} has no UTC offset, so it names another moment in every time zone: add one, e.g. ${local[1]}T${local[2]}Z (UTC) or ${local[1]}T${local[2]}+01:00`;
  return `${JSON.stringify(input)} is not an ISO date-time: write it as 2026-12-01T09:00:00Z (or with an offset, +01:00)`;
}

export const NODE_KINDS = ["action", "approval", "wait", "subgraph", "llm", "tool", "agent"] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/**
 * The canonical data form of a workflow: what is hashed into its version, stored with every
 * run, and drawn by the console. Code and JSON workflows both compile to it.
 */
export interface WorkflowDefinition {
  name: string;
  description?: string;
  state: Record<string, StateKeyDefinition>;
  start: string;
  nodes: Record<string, NodeDefinition>;
  limits: Limits;
  interruptBefore: string[];
  interruptAfter: string[];
}

/** Outgoing targets of a node as written (static `next` or route targets and default). */
export function nodeTargets(node: NodeDefinition): string[] {
  const targets = new Set<string>();
  for (const t of asList(node.next)) targets.add(t);
  for (const t of Object.values(node.routes ?? {}).flatMap(asList)) targets.add(t);
  if (node.default !== undefined) targets.add(node.default);
  for (const t of asList(node.catch?.next)) targets.add(t);
  return [...targets];
}

export function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** A wait node that routes on whether its signal came (`received`) or its time ran out (`timeout`). */
export function routesOnSignal(node: NodeDefinition): boolean {
  return node.kind === "wait" && node.routes !== undefined && (Object.hasOwn(node.routes, RECEIVED_ROUTE) || Object.hasOwn(node.routes, TIMEOUT_ROUTE));
}

export function hasRoutes(node: NodeDefinition): boolean {
  return node.routes !== undefined && Object.keys(node.routes).length > 0;
}
