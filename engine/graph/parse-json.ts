import { parse, parseTree, printParseErrorCode, visit, type Node, type ParseError } from "jsonc-parser";
import { ProblemList, type Occurrences } from "./problems.js";

/**
 * JSON text parsed, or its first syntax error in words, with its line and column: the one
 * parser of every JSON a person writes (workflows, `--input`, the config file, model scripts).
 */
export function parseJsonText(
  text: string,
  options: { comments?: boolean; trailingCommas?: boolean } = {},
): { value: unknown; error?: undefined } | { error: string; line: number; column: number } {
  const strict = !options.comments && !options.trailingCommas;
  let parseError: unknown;
  if (strict) {
    // JSON's own parser for the value: a "__proto__" key stays a key, as everywhere else.
    try {
      return { value: JSON.parse(text) as unknown };
    } catch (error) {
      parseError = error;
    }
  }
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: options.trailingCommas ?? false, disallowComments: !options.comments });
  // The first error is the mistake; the parser's later ones mostly follow from it.
  const first = errors[0];
  if (first) {
    const { line, column } = lineColumn(text, first.offset);
    return { error: `line ${line}, column ${column}: ${describe(printParseErrorCode(first.error))}`, line, column };
  }
  if (!strict) return { value };
  // What only JSON's parser refuses (an empty text...): its words, at its position.
  const message = (parseError as Error).message;
  const at = /position (\d+)/.exec(message);
  const { line, column } = lineColumn(text, at ? Number(at[1]) : 0);
  return { error: `line ${line}, column ${column}: ${message.replace(/ (in JSON )?at position \d+.*$/, "")}`, line, column };
}

/** A node's definition that a later key of the same name replaced, `occurrence` counting from 0 as written. */
export interface LostDefinition {
  /** The path in the file of the workflow the node is in: [] for the file's own, else an inline sub-workflow's. */
  workflow: (string | number)[];
  /** Which replaced definitions along that path the workflow is in (an inline sub-workflow of one). */
  within?: Occurrences;
  name: string;
  definition: unknown;
  occurrence: number;
}

/**
 * Parses a workflow file's text. Syntax errors are reported with line and column; a node name
 * written twice (which JSON.parse would silently collapse) is reported as DUPLICATE_NODE, and the
 * definitions it dropped are returned, to be checked too. (A `__proto__` key stays a key, which
 * the checks of names refuse where a name is expected.)
 */
export function parseWorkflowText(text: string, problems: ProblemList): { value: unknown; lostNodes: LostDefinition[] } | undefined {
  const parsed = parseJsonText(text);
  if (parsed.error !== undefined) {
    Object.assign(problems.error([], "BAD_JSON", parsed.error), { line: parsed.line, column: parsed.column });
    return undefined;
  }
  const nodeWrittenTwice = findLostKeys(text, problems);
  return { value: parsed.value, lostNodes: nodeWrittenTwice ? lostNodes(text) : [] };
}

/**
 * The definitions of nodes written more than once that JSON.parse dropped for the last, in the
 * file's workflow and in the inline sub-workflows of every definition, kept or dropped.
 */
function lostNodes(text: string): LostDefinition[] {
  const out: LostDefinition[] = [];
  const collect = (doc: Node | undefined, workflow: (string | number)[], within: Occurrences) => {
    const nodes = lastValue(doc, "nodes");
    const written = new Map<string, Node[]>();
    for (const property of nodes?.type === "object" ? (nodes.children ?? []) : []) {
      const [key, value] = property.children ?? [];
      if (typeof key?.value === "string" && value) written.set(key.value, [...(written.get(key.value) ?? []), value]);
    }
    for (const [name, values] of written) {
      values.forEach((value, occurrence) => {
        const dropped = occurrence < values.length - 1;
        if (dropped) out.push({ workflow, ...(within.length > 0 ? { within } : {}), name, occurrence, definition: JSON.parse(text.slice(value.offset, value.offset + value.length)) as unknown });
        const inline = lastValue(value, "workflow");
        const path = [...workflow, "nodes", name];
        if (inline?.type === "object") collect(inline, [...path, "workflow"], dropped ? [...within, [path.length - 1, occurrence]] : within);
      });
    }
  };
  collect(parseTree(text), [], []);
  return out;
}

/** The value of an object's last property of that name (the one JSON keeps). */
function lastValue(object: Node | undefined, key: string): Node | undefined {
  return object?.type === "object" ? object.children?.findLast((p) => p.children?.[0]?.value === key)?.children?.[1] : undefined;
}

/** Whether a path in a file is a workflow's node: one of the file's own, or of an inline sub-workflow (`…nodes.X.workflow.nodes.Y`). */
function isNodePath(path: readonly (string | number)[]): boolean {
  if (path.length < 2 || path.length % 3 !== 2 || path[path.length - 2] !== "nodes") return false;
  for (let i = 0; i < path.length - 2; i += 3) {
    if (path[i] !== "nodes" || path[i + 2] !== "workflow") return false;
  }
  return true;
}

/** Keys the parsed value cannot hold as written: one written twice (the last wins). Whether a node's was. */
function findLostKeys(text: string, problems: ProblemList): boolean {
  let nodeWrittenTwice = false;
  const seen: Set<string>[] = [];
  visit(text, {
    onObjectBegin: () => {
      seen.push(new Set());
    },
    onObjectEnd: () => {
      seen.pop();
    },
    onObjectProperty: (property, offset, _length, _line, _char, pathSupplier) => {
      const keys = seen[seen.length - 1];
      if (!keys) return;
      if (keys.has(property)) {
        const path = [...pathSupplier(), property];
        const { line, column } = lineColumn(text, offset);
        const isNode = isNodePath(path);
        const problem = problems.error(
          path,
          isNode ? "DUPLICATE_NODE" : "INVALID_FIELD",
          isNode
            ? `node "${property}" is defined twice (again at line ${line}, column ${column})`
            : `key "${property}" appears twice (again at line ${line}, column ${column})`,
        );
        Object.assign(problem, { line, column });
        nodeWrittenTwice ||= isNode;
      }
      keys.add(property);
    },
  });
  return nodeWrittenTwice;
}

/**
 * Gives each problem found in a document the line and column of its path in the text: the key
 * of the field it names, or, for a field that is missing, the object that lacks it.
 */
export function locateProblems(text: string, problems: ProblemList): void {
  let tree: Node | undefined;
  for (const problem of problems.items) {
    const path = problems.pathOf(problem);
    if (problem.line !== undefined || !path || path.length === 0) continue;
    tree ??= parseTree(text);
    if (!tree) return;
    for (let n = path.length; n > 0; n--) {
      const found = nodeAt(tree, path.slice(0, n), problems.occurrencesOf(problem));
      if (!found) continue;
      // A property's value: point at its key, where the field is named.
      const at = found.parent?.type === "property" ? found.parent.offset : found.offset;
      Object.assign(problem, lineColumn(text, at));
      break;
    }
  }
}

/**
 * The value at a path. Of a key written more than once, the last, which JSON keeps, unless
 * `occurrences` names another for that part of the path.
 */
function nodeAt(tree: Node, path: readonly (string | number)[], occurrences: Occurrences): Node | undefined {
  let node: Node | undefined = tree;
  for (const [at, part] of path.entries()) {
    if (typeof part === "number") {
      node = node.type === "array" ? node.children?.[part] : undefined;
    } else {
      const matches: Node[] = node.type === "object" ? (node.children ?? []).filter((p) => p.children?.length === 2 && p.children[0]!.value === part) : [];
      const occurrence = occurrences.find(([i]) => i === at)?.[1];
      node = (occurrence !== undefined ? matches[occurrence] : matches.at(-1))?.children?.[1];
    }
    if (!node) return undefined;
  }
  return node;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function describe(code: string): string {
  const words: Record<string, string> = {
    InvalidSymbol: "unexpected character",
    InvalidNumberFormat: "invalid number",
    PropertyNameExpected: "expected a property name in double quotes",
    ValueExpected: "expected a value",
    ColonExpected: "expected ':'",
    CommaExpected: "expected ','",
    CloseBraceExpected: "expected '}'",
    CloseBracketExpected: "expected ']'",
    EndOfFileExpected: "unexpected text after the end of the document",
    InvalidCommentToken: "comments are not allowed",
    UnexpectedEndOfString: "unterminated string",
    UnexpectedEndOfNumber: "unterminated number",
    InvalidUnicode: "invalid unicode escape",
    InvalidEscapeCharacter: "invalid escape character",
    InvalidCharacter: "invalid character in string",
  };
  return words[code] ?? code;
}
