import { describe, expect, it } from "vitest";
import { checkWorkflowText } from "../../engine/index.js";

const warningsOf = (nodes: Record<string, unknown>, start = "split") =>
  checkWorkflowText(JSON.stringify({ name: "joins", start, nodes }))
    .problems.filter((p) => p.code === "JOIN_MAY_STICK")
    .map((p) => `${p.path}: ${p.message}`);

describe("a choice that can leave a join short is warned of (JOIN_MAY_STICK)", () => {
  it("warns of a rejected one of two parallel approvals, and of a route that leads to only some of what the join waits for", () => {
    const approvals = warningsOf({
      split: { action: "x", next: ["legal", "finance"] },
      legal: { kind: "approval", question: "Legal?", routes: { approve: "legalOk", reject: "END" } },
      finance: { kind: "approval", question: "Finance?", routes: { approve: "financeOk", reject: "END" } },
      legalOk: { action: "x", next: "ship" },
      financeOk: { action: "x", next: "ship" },
      ship: { action: "x", waitFor: ["legalOk", "financeOk"], next: "END" },
    });
    expect(approvals).toEqual([
      '$.nodes.legal.routes.reject: if "legal" takes route reject, "ship" gets financeOk but never legalOk and waits forever (the run fails with STUCK_JOIN): lead that route on to legalOk too, or let "ship" wait for fewer',
      '$.nodes.finance.routes.reject: if "finance" takes route reject, "ship" gets legalOk but never financeOk and waits forever (the run fails with STUCK_JOIN): lead that route on to financeOk too, or let "ship" wait for fewer',
    ]);
    const partial = warningsOf(
      {
        check: { action: "x", routes: { DONE: ["left", "right"], AGAIN: "left" } },
        left: { action: "x", next: "join" },
        right: { action: "x", next: "join" },
        join: { action: "x", waitFor: ["left", "right"], next: "END" },
      },
      "check",
    );
    expect(partial).toEqual([expect.stringMatching(/^\$\.nodes\.check\.routes\.AGAIN: if "check" takes route AGAIN, "join" gets left but never right /)]);
  });

  it("is quiet when a route leads to none of it (the join is never started) or loops back to choose again", () => {
    expect(
      warningsOf({
        split: { kind: "approval", question: "Go?", routes: { approve: "fan", reject: "END" } },
        fan: { action: "x", next: ["a", "b"] },
        a: { action: "x", next: "join" },
        b: { action: "x", next: "join" },
        join: { action: "x", waitFor: ["a", "b"], next: "END" },
      }),
    ).toEqual([]);
    expect(
      warningsOf({
        split: { action: "x", next: ["a", "work"] },
        a: { action: "x", next: "join" },
        work: { action: "x", next: "check" },
        check: { action: "x", routes: { done: "b", again: "work" } },
        b: { action: "x", next: "join" },
        join: { action: "x", waitFor: ["a", "b"], next: "END" },
      }),
    ).toEqual([]);
  });

  it("asks a chooser the join waits for to lead its route to the join itself, not on to itself", () => {
    const own = warningsOf(
      {
        pick: { action: "x", routes: { both: ["a", "b"], one: "a" } },
        a: { action: "x", next: "j" },
        b: { kind: "approval", question: "b?", routes: { approve: "j", reject: "END" } },
        j: { action: "x", waitFor: ["a", "b"], next: "END" },
      },
      "pick",
    );
    expect(own).toEqual([
      '$.nodes.pick.routes.one: if "pick" takes route one, "j" gets a but never b and waits forever (the run fails with STUCK_JOIN): lead that route on to b too, or let "j" wait for fewer',
      '$.nodes.b.routes.reject: if "b" takes route reject, "j" gets a but never b and waits forever (the run fails with STUCK_JOIN): lead that route to "j" too, or let "j" wait for fewer',
    ]);
  });

  it("is quiet about a join whose waitFor is already an error: a node with no edge to it, or that no path reaches", () => {
    const after = { rt: { action: "x", routes: { yes: "END", no: "END" }, default: "END" } };
    const codes = (nodes: Record<string, unknown>) => checkWorkflowText(JSON.stringify({ name: "joins", start: "split", nodes })).problems.map((p) => `${p.path} ${p.code}`);
    const noEdge = { split: { action: "x", next: ["b"] }, b: { action: "x", next: "join" }, d: { action: "x", next: "END" }, join: { action: "x", waitFor: ["b", "d"], next: "rt" }, ...after };
    expect(codes(noEdge)).toEqual(["$.nodes.join.waitFor[1] WAITFOR_NOT_PREDECESSOR", "$.nodes.d UNREACHABLE_NODE"]);
    const unreached = { split: { action: "x", next: ["b"] }, b: { action: "x", next: "join" }, d: { action: "x", next: "join" }, join: { action: "x", waitFor: ["b", "d"], next: "rt" }, ...after };
    expect(codes(unreached)).toEqual(["$.nodes.d UNREACHABLE_NODE"]);
  });
});
