import { END, definitionSchemas, type NodeDefinition, type NodeKind } from "./definition.js";
import type { ProblemCode, ProblemList } from "./problems.js";
import { isPlainObject } from "../state/ops.js";
import { schemaTypes } from "../state/schema.js";

type Path = (string | number)[];

/**
 * Fields a node kind accepts but does not honour, and why: the run would go on as if they were
 * not written. A subgraph node's attempt only starts its child run and parks; an approval's only
 * asks a person, and a wait's only parks the run until its time.
 */
const NO_EFFECT: Partial<Record<NodeKind, Partial<Record<"retry" | "catch" | "timeoutMs" | "atMostOnce", string>>>> = {
  subgraph: {
    timeoutMs: "a subgraph node only starts its child run and waits for it without a limit, so the child is not timed (give the child's own nodes a timeoutMs)",
  },
  approval: {
    retry: "an approval only asks a person: there is no failure to retry",
    catch: "an approval only asks a person: there is no failure to catch",
    timeoutMs: 'an approval only asks a person: nothing is timed (to limit how long the run waits for the answer, give it a deadline, e.g. { "seconds": 86400, "decision": "reject" })',
    atMostOnce: "an approval has no side effect a crash could repeat (asking again is safe), so there is nothing to run at most once",
  },
  wait: {
    retry: "a wait node only parks the run until its time or its signal: there is no failure to retry",
    catch: "a wait node only parks the run until its time or its signal: there is no failure to catch",
    timeoutMs: "a wait is a durable timer, not work: timeoutMs neither shortens nor limits it (use `seconds` or `until`)",
    atMostOnce: "a wait node has no side effect a crash could repeat, so there is nothing to run at most once",
  },
};

/**
 * A node's own fields that are valid one by one but do nothing, or contradict each other: fields
 * its kind ignores, targets listed twice, END beside nodes, a backoff cap below the backoff.
 * `raw` is the node as written (before defaults), to tell a given field from a defaulted one.
 */
export function checkNodeFields(node: NodeDefinition, raw: Record<string, unknown>, path: Path, problems: ProblemList): void {
  for (const [field, why] of Object.entries(NO_EFFECT[node.kind] ?? {})) {
    if (raw[field] !== undefined) problems.error([...path, field], "INVALID_FIELD", `\`${field}\` has no effect on ${withArticle(node.kind)} node: ${why}`);
  }
  checkTargetList(node.next, [...path, "next"], problems);
  for (const [key, targets] of Object.entries(node.routes ?? {})) checkTargetList(targets, [...path, "routes", key], problems);
  if (node.catch) checkTargetList(node.catch.next, [...path, "catch", "next"], problems);
  repeatedEntries(node.waitFor, [...path, "waitFor"], problems, "waiting for it once is the same");
  checkBackoff(raw, path, problems);
  if (node.kind === "agent" && node.approvalDeadline && !node.requireApproval?.length) {
    problems.error([...path, "approvalDeadline"], "INVALID_FIELD", "`approvalDeadline` has no effect without `requireApproval`: no tool call of this agent waits for an approval");
  }
  // Valid as written, but likely a date copied from an example or a year mistyped: the run would not wait.
  if (node.kind === "wait" && node.until !== undefined && Date.parse(node.until) <= Date.now()) {
    problems.warning([...path, "until"], "WAIT_IN_PAST", `\`until\` ${node.until} is in the past: the wait ends at once`);
  }
}

/**
 * A backoff cap below the backoff, read from the fields as written (with their defaults): said
 * beside any other mistake in the same `retry`, which leaves the policy itself unparsed.
 */
export function checkBackoff(raw: Record<string, unknown>, path: Path, problems: ProblemList): void {
  if (!isPlainObject(raw.retry)) return;
  const { shape } = definitionSchemas().retryPolicySchema;
  const backoff = shape.backoffMs.safeParse(raw.retry.backoffMs);
  const cap = shape.maxBackoffMs.safeParse(raw.retry.maxBackoffMs);
  if (!backoff.success || !cap.success || cap.data >= backoff.data) return;
  const [backoffMs, maxBackoffMs] = [backoff.data, cap.data];
  const given = raw.retry.maxBackoffMs !== undefined;
  problems.error(
    [...path, "retry", given ? "maxBackoffMs" : "backoffMs"],
    "INVALID_FIELD",
    `maxBackoffMs ${maxBackoffMs}${given ? "" : " (the default)"} is below backoffMs ${backoffMs}: every wait would be ${maxBackoffMs} ms, not ${backoffMs}; ${given ? "raise maxBackoffMs or lower backoffMs" : "give maxBackoffMs too"}`,
  );
}

/** `an approval`, `a wait`: a word led by the article its sound takes. */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;
}

/** A list of targets runs each node once, whatever the list repeats; END beside nodes ends nothing. */
function checkTargetList(targets: string | string[] | undefined, path: Path, problems: ProblemList): void {
  if (!Array.isArray(targets) || targets.length < 2) return;
  repeatedEntries(targets, path, problems, "a node runs once per step however often it is listed (`map: { over }` runs it once per item)", "error");
  const nodes = [...new Set(targets.filter((t) => t !== END))];
  if (targets.includes(END) && nodes.length > 0) {
    problems.error(
      [...path, targets.indexOf(END)],
      "INVALID_FIELD",
      `END beside ${nodes.map((t) => `"${t}"`).join(", ")} does nothing: ${nodes.length > 1 ? "they" : "it"} still run${nodes.length > 1 ? "" : "s"}, and the run ends when no node is left to run; leave END out`,
    );
  }
}

/** Each entry a list repeats, at the repetition's index. */
export function repeatedEntries(list: readonly string[] | undefined, path: Path, problems: ProblemList, why: string, severity: "error" | "warning" = "warning", code: ProblemCode = "INVALID_FIELD"): void {
  (list ?? []).forEach((entry, i) => {
    if (list!.indexOf(entry) !== i) problems[severity]([...path, i], code, `"${entry}" is listed more than once: ${why}`);
  });
}

/** Keywords that bound a value from below and from above, as JSON Schema pairs them. */
const BOUNDS = [
  ["minimum", "maximum"],
  ["minLength", "maxLength"],
  ["minItems", "maxItems"],
  ["minProperties", "maxProperties"],
] as const;

/**
 * What a schema contradicts itself in, in it and every schema nested in it: bounds no value can
 * meet (`minimum` above `maximum`, an exclusive bound equal to the other), such that the key or
 * answer refuses every value, and an `enum` value its `type` refuses (`"3"` for an integer), which
 * the key can never hold.
 */
export function checkSchemaContradictions(schema: unknown, path: Path, code: ProblemCode, problems: ProblemList): void {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => checkSchemaContradictions(s, [...path, i], code, problems));
    return;
  }
  if (!isPlainObject(schema)) return;
  for (const [low, high] of BOUNDS) {
    const lo = schema[low];
    const hi = schema[high];
    if (typeof lo === "number" && typeof hi === "number" && lo > hi) {
      problems.error([...path, low], code, `${low} ${lo} is above ${high} ${hi}: no value can match`);
    }
  }
  const crossed = typeof schema.minimum === "number" && typeof schema.maximum === "number" && schema.minimum > schema.maximum;
  const lower = crossed ? undefined : bound(schema, "minimum", "exclusiveMinimum");
  const upper = bound(schema, "maximum", "exclusiveMaximum");
  if (lower && upper && (lower.exclusive || upper.exclusive) && lower.value >= upper.value) {
    problems.error([...path, lower.keyword], code, `${lower.keyword} ${lower.value} leaves no number below ${upper.keyword} ${upper.value}: no value can match`);
  }
  const types = schemaTypes(schema);
  if (Array.isArray(schema.enum) && types.length > 0) {
    schema.enum.forEach((value: unknown, i) => {
      const type = jsonTypeOf(value);
      const fits = types.includes(type) || (type === "integer" && types.includes("number")) || (type === "null" && schema.nullable === true);
      if (!fits) problems.error([...path, "enum", i], code, `enum value ${JSON.stringify(value)} is ${type === "null" ? "null" : withArticle(type)}, which "type": ${JSON.stringify(schema.type)} refuses: no value can ever be ${JSON.stringify(value)}`);
    });
  }
  for (const nested of ["items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"]) {
    if (nested in schema) checkSchemaContradictions(schema[nested], [...path, nested], code, problems);
  }
  if (isPlainObject(schema.properties)) {
    for (const [key, value] of Object.entries(schema.properties)) checkSchemaContradictions(value, [...path, "properties", key], code, problems);
  }
}

/** A JSON value's type as JSON Schema names it, whole numbers being integers. */
function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

/** The tighter of an inclusive and an exclusive numeric bound, when either is given. */
function bound(schema: Record<string, unknown>, inclusive: string, exclusive: string): { value: number; exclusive: boolean; keyword: string } | undefined {
  const inc = typeof schema[inclusive] === "number" ? (schema[inclusive] as number) : undefined;
  const exc = typeof schema[exclusive] === "number" ? (schema[exclusive] as number) : undefined;
  if (exc === undefined) return inc === undefined ? undefined : { value: inc, exclusive: false, keyword: inclusive };
  const lower = inclusive === "minimum";
  const excTighter = inc === undefined || (lower ? exc >= inc : exc <= inc);
  return excTighter ? { value: exc, exclusive: true, keyword: exclusive } : { value: inc!, exclusive: false, keyword: inclusive };
}
