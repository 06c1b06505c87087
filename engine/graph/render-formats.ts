import { END, type WorkflowDefinition } from "./definition.js";
import { describeNode, edgesOf, nodeOrder } from "./render.js";

/**
 * A workflow as other tools draw graphs: Mermaid (GitHub and most Markdown viewers render it) and
 * Graphviz DOT. Node ids are made safe for each syntax; labels keep the node names and what each
 * node does, route keys on conditional edges, dashed default edges, fan-in waits.
 */
export function renderMermaid(definition: WorkflowDefinition): string {
  const ids = idsOf(definition);
  const text = (s: string) => `"${s.replace(/"/g, "#quot;").replace(/\n/g, "<br/>")}"`;
  const lines = ["flowchart TD", `  __start([start]) --> ${ids.get(definition.start)}`];
  for (const name of nodeOrder(definition)) {
    const node = definition.nodes[name]!;
    const shape = node.kind === "approval" ? ["{{", "}}"] : node.kind === "wait" ? ["[/", "/]"] : node.kind === "subgraph" ? ["[[", "]]"] : ["[", "]"];
    lines.push(`  ${ids.get(name)}${shape[0]}${text(`${name}\n${describeNode(node)}${node.waitFor ? `\nwaits for ${node.waitFor.join(", ")}` : ""}`)}${shape[1]}`);
    for (const { label, target } of edgesOf(node)) {
      const to = target === END ? "__end" : ids.get(target);
      if (label === null) lines.push(`  ${ids.get(name)} --> ${to}`);
      else if (label === "default") lines.push(`  ${ids.get(name)} -.->|default| ${to}`);
      else lines.push(`  ${ids.get(name)} -->|${text(label)}| ${to}`);
    }
  }
  lines.push("  __end([END])");
  return lines.join("\n");
}

export function renderDot(definition: WorkflowDefinition): string {
  const quote = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
  const lines = [`digraph ${quote(definition.name)} {`, "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];', '  "__start" [label="start", shape=oval];', '  "__end" [label="END", shape=oval];'];
  lines.push(`  "__start" -> ${quote(definition.start)};`);
  for (const name of nodeOrder(definition)) {
    const node = definition.nodes[name]!;
    const shape = node.kind === "approval" ? "hexagon" : node.kind === "wait" ? "parallelogram" : node.kind === "subgraph" ? "box3d" : "box";
    lines.push(`  ${quote(name)} [label=${quote(`${name}\n${describeNode(node)}${node.waitFor ? `\nwaits for ${node.waitFor.join(", ")}` : ""}`)}, shape=${shape}];`);
    for (const { label, target } of edgesOf(node)) {
      const to = target === END ? '"__end"' : quote(target);
      const attrs = label === null ? "" : label === "default" ? ' [label="default", style=dashed]' : ` [label=${quote(label)}]`;
      lines.push(`  ${quote(name)} -> ${to}${attrs};`);
    }
  }
  lines.push("}");
  return lines.join("\n");
}

/** Mermaid ids: letters, digits and `_` only, unique, never a keyword (`end` is one). */
function idsOf(definition: WorkflowDefinition): Map<string, string> {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  for (const name of Object.keys(definition.nodes)) {
    const base = `n_${name.replace(/[^A-Za-z0-9_]/g, "_")}`;
    let id = base;
    for (let i = 2; used.has(id); i++) id = `${base}_${i}`;
    used.add(id);
    ids.set(name, id);
  }
  return ids;
}
