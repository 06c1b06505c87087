import type { z } from "zod";
import { WorkflowError, errorMessage } from "../errors.js";
import type { CustomReducer, State } from "../state/ops.js";
import { zodToKeySchema, type ReducerName } from "../state/schema.js";
import { checkWorkflow } from "./check.js";
import { compileDefinition } from "./compile.js";
import { bindTools, type Tool } from "../llm/tools.js";
import type { ModelProvider } from "../llm/types.js";
import type { ApprovalDecision, Limits, LlmNodeDefinition, MapSpec, RetryPolicyInput } from "./definition.js";
import type { CompiledWorkflow, NodeFunction, Router } from "./model.js";
import { ProblemList, formatProblem } from "./problems.js";
import type { LostDefinition } from "./parse-json.js";

/** Edges and execution settings shared by every node kind, as in the JSON form. */
export interface EdgeOptions<S extends State> {
  next?: string | string[];
  /** Route key → a node, or a list of nodes that then run in parallel. */
  routes?: Record<string, string | string[]>;
  default?: string;
  /** Route on this state key's value after the node's update. */
  routeOn?: keyof S & string;
  /** Route on whatever this function returns. */
  route?: Router<S>;
  waitFor?: string[];
  retry?: RetryPolicyInput;
  /** Where the node goes when it fails for good, instead of pausing the run: `{ next, on?, output? }`. */
  catch?: { next: string | string[]; on?: string[]; output?: keyof S & string; tolerate?: number | `${number}%` };
  timeoutMs?: number;
  atMostOnce?: boolean;
  map?: MapSpec;
  description?: string;
}

export interface NodeOptions<S extends State> extends EdgeOptions<S> {
  /** The action name recorded in the canonical form (default: the node's name). */
  action?: string;
}

/** Fields of the model-backed kinds, as in the JSON form. */
type ModelFields = Pick<LlmNodeDefinition, "model" | "system" | "temperature" | "maxTokens"> & { modelAttempts?: number };

export interface WorkflowOptions<Shape extends z.ZodRawShape> {
  state: z.ZodObject<Shape>;
  /** Tools the workflow's tool and agent nodes may call, by name. */
  tools?: Record<string, Tool>;
  /** The model of its llm, tool and agent nodes (default: the environment's, PITWALL_LLM_*). */
  model?: ModelProvider;
  /**
   * Per key: `append`, `merge`, or a function of the current value and a node's write (typed by
   * the key's schema; the write may be of another type, such as one item of a list; what the
   * function returns is checked against the schema when the node's write is).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  reducers?: { [K in keyof Shape]?: ReducerName | ((current: z.output<Shape[K]>, update: any) => unknown) };
  start?: string;
  limits?: Partial<Limits>;
  interruptBefore?: string[];
  interruptAfter?: string[];
  description?: string;
}

/**
 * Builds a workflow in code. Every call mirrors a field of the JSON form, so the same graph
 * written either way has the same canonical definition and version.
 */
/** What a reducer takes as a write to a key of type `T`. */
type UpdateOf<R, T> = R extends (current: never, update: infer U) => unknown ? U : R extends "append" ? (T extends readonly (infer I)[] ? T | I : T) : T;

/** What nodes may write to each key of `S`, given the workflow's reducers `R`. */
export type WritesOf<S extends State, R> = [R] extends [object] ? { [K in keyof S]: K extends keyof R ? UpdateOf<R[K], S[K]> : S[K] } : S;

/** The item a node mapped over key `K` of `S` gets: the list's element type (unknown when not mapped). */
type ItemOf<S extends State, K extends keyof S> = [K] extends [never] ? unknown : S[K] extends readonly (infer I)[] ? I : unknown;

/** A map spec naming its key, so that the key's element type reaches `ctx.item`. */
type MapOver<K extends string> = Omit<MapSpec, "over"> & { over: K };

export class WorkflowBuilder<S extends State, W extends State = S> {
  private readonly nodes: Record<string, Record<string, unknown>> = {};
  private readonly actions = new Map<string, NodeFunction>();
  private readonly routers = new Map<string, Router>();
  private readonly children = new Map<string, CompiledWorkflow>();
  /** The definitions of nodes a later call of the same name replaced, as a JSON key written twice. */
  private readonly replaced: LostDefinition[] = [];
  private first: string | undefined;

  constructor(
    private readonly name: string,
    private readonly options: WorkflowOptions<z.ZodRawShape>,
  ) {}

  /**
   * A node that runs `fn(state, ctx)` and returns a partial state (or `{ route, update }`). Mapped
   * over a list key (`map: { over }`), it runs once per item, `ctx.item` typed as one.
   */
  node<K extends keyof S & string = never>(name: string, fn: NodeFunction<S, W, ItemOf<S, K>>, options: NodeOptions<S> & { map?: MapOver<K> } = {}): this {
    const { action = name, ...rest } = options;
    const existing = this.actions.get(action);
    // A node added twice is reported with every other problem at compile (DUPLICATE_NODE).
    if (existing && existing !== fn && !(Object.hasOwn(this.nodes, name) && action === name)) {
      throw new WorkflowError(`action name "${action}" is used for two different functions`);
    }
    this.actions.set(action, fn as NodeFunction);
    return this.add(name, { kind: "action", action }, rest);
  }

  /** Asks a person; the decision (approve, reject, edit) is the route key. */
  approval(
    name: string,
    options: EdgeOptions<S> & { question: string; show?: string[]; decisions?: ApprovalDecision[]; deadline?: { seconds: number; decision: "approve" | "reject" } },
  ): this {
    const { question, show, decisions, deadline, ...rest } = options;
    return this.add(name, { kind: "approval", question, ...(show ? { show } : {}), ...(decisions ? { decisions } : {}), ...(deadline ? { deadline } : {}) }, rest);
  }

  /** A durable timer, or a wait for a signal sent to the run (its data written to `output`). */
  wait(name: string, options: EdgeOptions<S> & ({ seconds: number } | { until: string } | { signal: string; output?: keyof S & string; seconds?: number })): this {
    const { seconds, until, signal, output, ...rest } = options as EdgeOptions<S> & { seconds?: number; until?: string; signal?: string; output?: string };
    return this.add(
      name,
      {
        kind: "wait",
        ...(seconds !== undefined ? { seconds } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(signal !== undefined ? { signal } : {}),
        ...(output !== undefined ? { output } : {}),
      },
      rest,
    );
  }

  /** A node whose body is another workflow, run as a child run. */
  subgraph(
    name: string,
    child: CompiledWorkflow,
    options: EdgeOptions<S> & { input?: Record<string, string>; output?: Record<string, string> } = {},
  ): this {
    const { input, output, ...rest } = options;
    this.children.set(child.version, child);
    return this.add(name, { kind: "subgraph", workflow: child.version, ...(input ? { input } : {}), ...(output ? { output } : {}) }, rest);
  }

  /** A chat completion over a prompt template; the answer (text, or JSON matching `schema`) goes to `output`. */
  llm(name: string, options: EdgeOptions<S> & ModelFields & { prompt: string; output: keyof S & string; schema?: Record<string, unknown> }): this {
    const { model, system, temperature, maxTokens, modelAttempts, prompt, output, schema, ...rest } = options;
    return this.add(name, { kind: "llm", prompt, output, ...defined({ schema, model, system, temperature, maxTokens, modelAttempts }) }, rest);
  }

  /** The model fills a tool's arguments and the tool runs; optionally its result is classified into a route key. */
  tool(
    name: string,
    options: EdgeOptions<S> & ModelFields & { tool: string; instruction: string; output?: keyof S & string; outputOptions?: string[]; classify?: string },
  ): this {
    const { model, system, temperature, maxTokens, modelAttempts, tool, instruction, output, outputOptions, classify, ...rest } = options;
    return this.add(name, { kind: "tool", tool, instruction, ...defined({ output, outputOptions, classify, model, system, temperature, maxTokens, modelAttempts }) }, rest);
  }

  /** The model picks tools until it answers; every model answer and tool call is a durable call. */
  agent(
    name: string,
    options: EdgeOptions<S> &
      ModelFields & {
        prompt: string;
        tools: string[];
        output: keyof S & string;
        requireApproval?: string[];
        schema?: Record<string, unknown>;
        maxTurns?: number;
        toolErrors?: "fail" | "tell-model";
      },
  ): this {
    const { model, system, temperature, maxTokens, modelAttempts, prompt, tools, output, requireApproval, schema, maxTurns, toolErrors, ...rest } = options;
    return this.add(
      name,
      { kind: "agent", prompt, tools, output, ...defined({ requireApproval, schema, maxTurns, toolErrors, model, system, temperature, maxTokens, modelAttempts }) },
      rest,
    );
  }

  compile(): CompiledWorkflow<S> {
    const reducers = new Map<string, CustomReducer>();
    const keySchemas = new Map<string, z.ZodType>();
    const state: Record<string, Record<string, unknown>> = {};
    const problems = new ProblemList();
    // A zod 3 schema (a project on zod 3, or "zod/v3") has the same shape and none of zod 4's internals.
    const zod4 = typeof this.options.state === "object" && this.options.state !== null && "_zod" in this.options.state;
    if (!zod4) problems.error(["state"], "BAD_STATE_SCHEMA", 'the state is not a zod 4 object schema (zod 3 and "zod/v3" schemas are not supported): import { z } from "zod" with zod 4 installed');
    for (const [key, schema] of Object.entries(zod4 ? this.options.state.shape : {})) {
      const reducer = this.options.reducers?.[key];
      if (typeof reducer === "function") reducers.set(key, reducer);
      keySchemas.set(key, schema as z.ZodType);
      let json: Record<string, unknown> = {};
      try {
        json = zodToKeySchema(schema as z.ZodType);
        // A version is the hash of the definition: a default drawn anew at each compile would make
        // every process compile another version, and none could resume the runs of another.
        if (JSON.stringify(zodToKeySchema(schema as z.ZodType)) !== JSON.stringify(json)) {
          problems.error(
            ["state", key],
            "BAD_STATE_SCHEMA",
            `the default of "${key}" is a function giving another value each time: the workflow's version (the hash of its definition) would differ in every process, and no process could resume another's runs; give a fixed default, or set the value in the run's input or its first node`,
          );
        }
      } catch (error) {
        problems.error(["state", key], "BAD_STATE_SCHEMA", errorMessage(error));
      }
      state[key] = {
        ...json,
        ...(reducer === undefined || reducer === "replace" ? {} : { reducer: typeof reducer === "function" ? "custom" : reducer }),
      };
    }
    const raw = {
      name: this.name,
      ...(this.options.description !== undefined ? { description: this.options.description } : {}),
      state,
      start: this.options.start ?? this.first,
      nodes: this.nodes,
      ...(this.options.limits ? { limits: this.options.limits } : {}),
      ...(this.options.interruptBefore ? { interruptBefore: this.options.interruptBefore } : {}),
      ...(this.options.interruptAfter ? { interruptAfter: this.options.interruptAfter } : {}),
    };
    for (const [name, times] of this.timesAdded()) {
      problems.error(["nodes", name], "DUPLICATE_NODE", `node "${name}" is added ${times === 2 ? "twice" : `${times} times`}: the workflow would keep only the last; give each node its own name`);
    }
    const result = checkWorkflow(raw, {
      customReducers: new Set(reducers.keys()),
      lostNodes: this.replaced,
      anySchemaKeyword: true,
      resolveChild: (ref) => {
        const child = typeof ref === "string" ? this.children.get(ref) : undefined;
        return child ? { definition: child.definition, version: child.version } : undefined;
      },
    }, problems);
    const errors = result.problems.filter((p) => p.severity === "error");
    if (!result.definition || !result.version || errors.length > 0) {
      throw new WorkflowError(`workflow ${this.name} is invalid:\n${errors.map(formatProblem).join("\n")}`, result.problems);
    }
    const tools = bindTools(this.options.tools ?? {}, `workflow ${this.name}`);
    return compileDefinition(result.definition, result.version, {
      action: (name) => this.actions.get(name),
      routers: this.routers,
      reducers,
      keySchemas,
      children: this.children,
      tool: (name) => tools.get(name),
      toolsFrom: `among the tools of workflow ${this.name} (workflow(name, { tools }))`,
      warnings: result.problems.filter((p) => p.severity === "warning"),
      ...(this.options.model ? { model: this.options.model } : {}),
    }) as CompiledWorkflow<S>;
  }

  /** How many times each node added more than once was. */
  private timesAdded(): Map<string, number> {
    const times = new Map<string, number>();
    for (const { name } of this.replaced) times.set(name, (times.get(name) ?? 1) + 1);
    return times;
  }

  private add(name: string, body: Record<string, unknown>, options: EdgeOptions<S>): this {
    if (Object.hasOwn(this.nodes, name)) {
      const occurrence = this.replaced.filter((l) => l.name === name).length;
      this.replaced.push({ workflow: [], name, definition: this.nodes[name], occurrence });
    }
    this.first ??= name;
    const { route, ...edges } = options;
    if (route) this.routers.set(name, route as Router);
    // Defined, not assigned: a node named "__proto__" would replace the object's prototype and vanish.
    Object.defineProperty(this.nodes, name, { value: { ...body, ...stripUndefined(edges), ...(route ? { router: true } : {}) }, enumerable: true, writable: true, configurable: true });
    return this;
  }
}

/** Starts a workflow in code: `workflow("name", { state: z.object({...}) }).node(...).compile()`. */
export function workflow<Shape extends z.ZodRawShape, R extends WorkflowOptions<Shape>["reducers"] = undefined>(
  name: string,
  options: WorkflowOptions<Shape> & { reducers?: R },
): WorkflowBuilder<z.output<z.ZodObject<Shape>>, WritesOf<z.output<z.ZodObject<Shape>>, R>> {
  return new WorkflowBuilder(name, options as unknown as WorkflowOptions<z.ZodRawShape>);
}

const defined = stripUndefined;

function stripUndefined(value: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
