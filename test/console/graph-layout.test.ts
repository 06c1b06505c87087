import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow, type WorkflowDefinition } from "../../engine/index.js";
import { drawLayers, type NodeLabel } from "../../source/console/graph/draw.js";
import { layerGraph } from "../../source/console/graph/layers.js";
import { researchWorkflow, taskQueueWorkflow, travelWorkflow } from "./fixtures.js";

const noop = () => ({});

function draw(definition: WorkflowDefinition, width = 78, label = (n: string) => n): string[] {
  const layering = layerGraph(definition);
  const labels = new Map<string, NodeLabel>(layering.nodes.map((n) => [n, { text: label(n) }]));
  return drawLayers(layering, labels, width).rows.map((r) => r.map((x) => x.text).join(""));
}

describe("graph layout", () => {
  it("layers nodes by longest path from the start and marks loop edges as back edges", () => {
    const layering = layerGraph(taskQueueWorkflow().definition);
    expect(layering.layers.map((l) => l.filter((n) => !layering.isDummy(n)))).toEqual([["init"], ["work"], ["check"], ["summary"], ["END"]]);
    expect(layering.edges.filter((e) => e.back)).toEqual([{ from: "check", to: "work", label: "NO/else", back: true }]);
  });

  it("places a join below all of its branches and routes long edges through the layers between", () => {
    const layering = layerGraph(researchWorkflow().definition);
    const layerOf = (n: string) => layering.layers.findIndex((l) => l.includes(n));
    expect(layerOf("join")).toBe(layerOf("review") + 1);
    expect(layering.layers[layerOf("review")]!.filter((n) => layering.isDummy(n))).toHaveLength(4);
  });

  it("keeps a straight edge straight: a chain is drawn in one column", () => {
    const rows = draw(taskQueueWorkflow().definition);
    const column = (text: string) => rows.find((r) => r.includes(text))!.indexOf(text);
    expect(new Set(["init", "work", "summary", "END"].map((n) => column(n) + Math.floor((n.length - 1) / 2))).size).toBe(1);
    expect(rows.filter((r) => r.trim() === "│").length).toBeGreaterThanOrEqual(2);
  });

  it("centres a fan-out under its source and merges it into one bus", () => {
    const rows = draw(travelWorkflow().definition);
    const plan = rows.findIndex((r) => r.includes("plan"));
    expect(rows[plan + 1]).toMatch(/^\s*╭─+┼─+╮\s*$/);
    const bus = rows[plan + 1]!;
    expect(bus.indexOf("┼")).toBe(rows[plan]!.indexOf("plan") + 1);
  });

  it("draws a route that fans out as one labelled edge to each of its nodes", () => {
    const definition = workflow("routed-fanout", { state: z.object({ n: z.number().default(0) }) })
      .node("triage", noop, { routes: { both: ["a", "b"], one: "a" }, default: "a" })
      .node("a", noop, { next: "END" })
      .node("b", noop, { next: "END" })
      .compile().definition;
    const layering = layerGraph(definition);
    expect(layering.edges.filter((e) => e.from === "triage").map((e) => [e.to, e.label])).toEqual([["a", "both/one/else"], ["b", "both"]]);
    expect(layering.layers[1]!.filter((n) => !layering.isDummy(n)).sort()).toEqual(["a", "b"]);
  });

  it("draws self-loops and unreachable nodes without losing them", () => {
    const compiled = workflow("odd", { state: z.object({ n: z.number().default(0) }) })
      .node("poll", noop, { routes: { again: "poll", done: "END" }, default: "poll" })
      .compile().definition;
    // A stored definition is drawn as it is, even one the checks of today would refuse.
    const definition: WorkflowDefinition = { ...compiled, nodes: { ...compiled.nodes, orphan: { kind: "action", action: "orphan", next: "END" } } };
    const layering = layerGraph(definition);
    expect(layering.edges.find((e) => e.from === "poll" && e.to === "poll")?.back).toBe(true);
    expect(layering.layers.flat()).toContain("orphan");
    expect(draw(definition).join("\n")).toContain("orphan");
  });

  it("draws a layer wider than the screen whole, to be seen through a window; past four screens it cuts long names in the middle", () => {
    const names = ["検索エージェント-1", "検索エージェント-2", "🚀-launcher-agent", "a-very-long-node-name-indeed", "short"];
    let builder = workflow("wide", { state: z.object({ n: z.number().default(0) }) }).node("start", noop, { next: names });
    for (const name of names) builder = builder.node(name, noop, { next: "END" });
    const definition = builder.compile().definition;
    const layering = layerGraph(definition);
    const drawing = drawLayers(layering, new Map(layering.nodes.map((n) => [n, { text: n }])), 60);
    expect(drawing.width).toBeGreaterThan(60);
    const whole = drawing.rows.map((r) => r.map((x) => x.text).join(""));
    for (const name of names) expect(whole.find((r) => r.includes("short"))).toContain(name);
    // Any window is as wide as the screen at most, also where it cuts a wide character.
    for (let from = 0; from <= drawing.width - 60; from++) {
      for (const row of drawing.window(from, 60)) expect(stringWidth(row.map((x) => x.text).join(""))).toBeLessThanOrEqual(60);
    }
    expect(drawing.columnOf.get("🚀-launcher-agent")).toBeGreaterThan(60);
    const narrow = draw(definition, 20);
    for (const row of narrow) expect(stringWidth(row)).toBeLessThanOrEqual(80);
    const layer = narrow.find((r) => r.includes("short"))!;
    expect(layer).toMatch(/…ント-1/);
    expect(layer).toMatch(/…ント-2/);
  });
});
