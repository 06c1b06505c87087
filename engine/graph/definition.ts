import { z } from "zod";
import type { StateKeyDefinition } from "../state/schema.js";

/** The name of the graph's end; a route or `next` may point at it. */
export const END = "END";

export const DECISIONS = ["approve", "reject", "edit"] as const;
export type ApprovalDecision = (typeof DECISIONS)[number];

const nodeName = z.string().min(1);

export const retryPolicySchema = z
  .object({
    maxAttempts: z.number().int().min(1).default(1),
    backoffMs: z.number().min(0).default(200),
    factor: z.number().min(1).default(2),
    maxBackoffMs: z.number().min(0).default(30_000),
    jitter: z.number().min(0).max(1).default(0.2),
    /** Error names or codes that are retried; empty or absent means every error. */
    retryOn: z.array(z.string()).optional(),
    /** What happens when attempts run out: pause for an operator (default) or fail the run. */
    onExhausted: z.enum(["pause", "fail"]).default("pause"),
  })
  .strict();
export type RetryPolicy = z.output<typeof retryPolicySchema>;
export type RetryPolicyInput = z.input<typeof retryPolicySchema>;

export const mapSchema = z
  .object({
    /** A state key holding an array: one task per item. */
    over: z.string().min(1),
    /** For sub-workflow nodes: the child state key that receives the item (default `item`). */
    as: z.string().min(1).optional(),
    concurrency: z.number().int().min(1).optional(),
  })
  .strict();
export type MapSpec = z.output<typeof mapSchema>;

/** Fields every node kind shares: edges, routing, retries, timeouts, delivery, dynamic fan-out. */
const commonFields = {
  description: z.string().optional(),
  next: z.union([nodeName, z.array(nodeName).min(1)]).optional(),
  routes: z.record(z.string().min(1), nodeName).optional(),
  default: nodeName.optional(),
  routeOn: z.string().min(1).optional(),
  /** Code workflows only: a router function chooses the route key. Marked here so the graph can say so. */
  router: z.boolean().optional(),
  waitFor: z.array(nodeName).min(1).optional(),
  retry: retryPolicySchema.optional(),
  timeoutMs: z.number().int().min(1).optional(),
  atMostOnce: z.boolean().optional(),
  map: mapSchema.optional(),
};

const actionNode = z.object({ kind: z.literal("action").default("action"), action: z.string().min(1), ...commonFields }).strict();
const approvalNode = z
  .object({
    kind: z.literal("approval"),
    question: z.string().min(1),
    show: z.array(z.string().min(1)).optional(),
    decisions: z.array(z.enum(DECISIONS)).min(1).default([...DECISIONS]),
    ...commonFields,
  })
  .strict();
const waitNode = z
  .object({
    kind: z.literal("wait"),
    seconds: z.number().min(0).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    ...commonFields,
  })
  .strict()
  .refine((n) => (n.seconds === undefined) !== (n.until === undefined), {
    message: "a wait node needs exactly one of `seconds` or `until`",
  });
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

export const NODE_KINDS = ["action", "approval", "wait", "subgraph"] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export const nodeSchemas = {
  action: actionNode,
  approval: approvalNode,
  wait: waitNode,
  subgraph: subgraphNode,
} satisfies Record<NodeKind, z.ZodType>;

export type ActionNodeDefinition = z.output<typeof actionNode>;
export type ApprovalNodeDefinition = z.output<typeof approvalNode>;
export type WaitNodeDefinition = z.output<typeof waitNode>;
export type SubgraphNodeDefinition = z.output<typeof subgraphNode>;
export type NodeDefinition =
  | ActionNodeDefinition
  | ApprovalNodeDefinition
  | WaitNodeDefinition
  | SubgraphNodeDefinition;
export type NodeDefinitionInput =
  | z.input<typeof actionNode>
  | z.input<typeof approvalNode>
  | z.input<typeof waitNode>
  | z.input<typeof subgraphNode>;

export const limitsSchema = z
  .object({
    maxSteps: z.number().int().min(1).default(1000),
    concurrency: z.number().int().min(1).default(8),
  })
  .strict();
export type Limits = z.output<typeof limitsSchema>;

/** The top level of a workflow file; nodes and state keys are checked one by one afterwards. */
export const workflowShape = z
  .object({
    $schema: z.string().optional(),
    name: z.string().min(1).regex(/^[\w.-]+$/, "use letters, digits, '.', '_' or '-'"),
    description: z.string().optional(),
    state: z.record(z.string().min(1), z.record(z.string(), z.unknown())).default({}),
    start: z.string().min(1),
    nodes: z.record(z.string(), z.record(z.string(), z.unknown())),
    limits: limitsSchema.default({ maxSteps: 1000, concurrency: 8 }),
    interruptBefore: z.array(z.string()).default([]),
    interruptAfter: z.array(z.string()).default([]),
  })
  .strict();

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
  for (const t of Object.values(node.routes ?? {})) targets.add(t);
  if (node.default !== undefined) targets.add(node.default);
  return [...targets];
}

export function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

export function hasRoutes(node: NodeDefinition): boolean {
  return node.routes !== undefined && Object.keys(node.routes).length > 0;
}
