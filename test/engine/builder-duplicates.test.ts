import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowError, formatProblem, workflow, type Problem } from "../../engine/index.js";

const noop = () => ({});

/** What compiling the built workflow is refused with, one formatted problem a line (none: it compiled). */
function refusal(build: () => unknown): string[] {
  try {
    build();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowError);
    return ((error as WorkflowError).problems as Problem[]).map(formatProblem);
  }
}

describe("a node added twice to a workflow built in code", () => {
  it("reports a node added twice in code", () => {
    const build = () =>
      workflow("dup", { state: z.object({}) })
        .node("a", noop, { next: "END" })
        .node("a", noop, { next: "END" })
        .compile();
    expect(build).toThrow(WorkflowError);
    try {
      build();
    } catch (error) {
      expect((error as WorkflowError).problems).toContainEqual(expect.objectContaining({ code: "DUPLICATE_NODE", path: "$.nodes.a" }));
    }
  });

  it("reports a node added twice in code with two different functions as a duplicate node", () => {
    const build = () =>
      workflow("dup2", { state: z.object({}) })
        .node("a", () => ({}), { next: "END" })
        .node("a", () => ({}), { next: "END" })
        .compile();
    expect(build).toThrow(WorkflowError);
    try {
      build();
    } catch (error) {
      expect((error as WorkflowError).problems.map((p) => p.code)).toEqual(["DUPLICATE_NODE"]);
    }
  });

  it("names the node and how often it was added, once, whatever kinds the calls were", () => {
    const thrice = () =>
      workflow("thrice", { state: z.object({}) })
        .node("a", noop, { next: "END" })
        .approval("a", { question: "Go on?", next: "END" })
        .wait("a", { seconds: 1, next: "END" })
        .compile();
    expect(refusal(thrice)).toEqual(['$.nodes.a: DUPLICATE_NODE: node "a" is added 3 times: the workflow would keep only the last; give each node its own name']);
    const child = workflow("child", { state: z.object({}) }).node("x", noop, { next: "END" }).compile();
    const subTwice = () => workflow("subs", { state: z.object({}) }).subgraph("s", child, { next: "END" }).subgraph("s", child, { next: "END" }).compile();
    expect(refusal(subTwice)).toEqual(['$.nodes.s: DUPLICATE_NODE: node "s" is added twice: the workflow would keep only the last; give each node its own name']);
  });

  it("checks the definition a later call replaced too, and counts its edges for reachability, as a JSON key written twice", () => {
    const firstBroken = () =>
      workflow("first", { state: z.object({}) })
        .node("a", noop, { next: "nowhere" })
        .node("a", noop, { next: "END" })
        .compile();
    expect(refusal(firstBroken)).toEqual([
      '$.nodes.a: DUPLICATE_NODE: node "a" is added twice: the workflow would keep only the last; give each node its own name',
      '$.nodes.a.next: UNKNOWN_TARGET: "nowhere" is not a node (nor END) (nodes: a)',
    ]);
    // Only the replaced definition leads to "b": which one was meant is the author's to say.
    const onlyFirstLeads = () =>
      workflow("leads", { state: z.object({}) })
        .node("a", noop, { next: "b" })
        .node("a", noop, { next: "END" })
        .node("b", noop, { next: "END" })
        .compile();
    expect(refusal(onlyFirstLeads)).toEqual(['$.nodes.a: DUPLICATE_NODE: node "a" is added twice: the workflow would keep only the last; give each node its own name']);
  });
});
