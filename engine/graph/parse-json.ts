import { findNodeAtLocation, parse, parseTree, printParseErrorCode, visit, type Node, type ParseError } from "jsonc-parser";
import { ProblemList } from "./problems.js";

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

/**
 * Parses a workflow file's text. Syntax errors are reported with line and column; a node name
 * written twice (which JSON.parse would silently collapse) is reported as DUPLICATE_NODE. (A
 * `__proto__` key stays a key, which the checks of names refuse where a name is expected.)
 */
export function parseWorkflowText(text: string, problems: ProblemList): unknown {
  const parsed = parseJsonText(text);
  if (parsed.error !== undefined) {
    Object.assign(problems.error([], "BAD_JSON", parsed.error), { line: parsed.line, column: parsed.column });
    return undefined;
  }
  findLostKeys(text, problems);
  return parsed.value;
}

/** Keys the parsed value cannot hold as written: one written twice (the last wins). */
function findLostKeys(text: string, problems: ProblemList): void {
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
        const isNode = path.length === 2 && path[0] === "nodes";
        const problem = problems.error(
          path,
          isNode ? "DUPLICATE_NODE" : "INVALID_FIELD",
          isNode
            ? `node "${property}" is defined twice (again at line ${line}, column ${column})`
            : `key "${property}" appears twice (again at line ${line}, column ${column})`,
        );
        Object.assign(problem, { line, column });
      }
      keys.add(property);
    },
  });
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
      const found = findNodeAtLocation(tree, [...path.slice(0, n)]);
      if (!found) continue;
      // A property's value: point at its key, where the field is named.
      const at = found.parent?.type === "property" ? found.parent.offset : found.offset;
      Object.assign(problem, lineColumn(text, at));
      break;
    }
  }
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
