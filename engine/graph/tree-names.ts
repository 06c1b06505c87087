import { isAbsolute, relative } from "node:path";
import { jsonPath } from "../state/schema.js";
import type { ProblemList } from "./problems.js";

/** A workflow of a file tree, named as in messages: its name, and where it is written. */
export interface Place {
  name: string;
  place: string;
}

/** A file as its messages name it: from the current folder, or whole when it is outside it. */
export function shownPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** Where a document is, in words: a file's workflow, or an inline sub-workflow at its whole path in its file. */
export function placeOf(where: { file?: string; prefix: readonly (string | number)[] }): string {
  const file = where.file !== undefined ? shownPath(where.file) : undefined;
  if (where.prefix.length === 0) return file !== undefined ? `the workflow of ${file}` : "the outermost workflow";
  return `the inline sub-workflow at ${jsonPath(where.prefix)}${file !== undefined ? ` in ${file}` : ""}`;
}

/**
 * Workflows are stored, listed and drawn by name (`pitwall workflows`, `pitwall graph NAME`): two
 * different workflows of one name in a file tree — a parent and its sub-workflows, nested, inline
 * or in files — would read as two versions of one workflow. Each sub-workflow's tree is compared,
 * as it is loaded, with the document's own name and with the trees loaded before it; one that is
 * the same workflow (the same version) is the same wherever it is.
 */
export class TreeNames {
  /** The workflows of the sub-workflows' trees, by version. */
  readonly places = new Map<string, Place>();

  constructor(
    private readonly name: unknown,
    private readonly self: string,
  ) {}

  add(tree: ReadonlyMap<string, Place>, path: (string | number)[], problems: ProblemList): void {
    for (const [version, workflow] of tree) {
      if (this.places.has(version)) continue;
      const other = workflow.name === this.name ? this.self : [...this.places.values()].find((p) => p.name === workflow.name)?.place;
      if (other !== undefined) {
        problems.error(
          path,
          "BAD_SUBGRAPH",
          `${workflow.place} is named "${workflow.name}", as is ${other}, but the two differ: pitwall workflows would list them as versions of one workflow, and pitwall graph ${workflow.name} draw only the newest; rename one of them`,
        );
      }
      this.places.set(version, workflow);
    }
  }
}
