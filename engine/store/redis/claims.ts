import { newId } from "../../ids.js";
import type { Claim, ClaimOptions } from "../store.js";
import { refusal } from "./replies.js";
import { decodeRun, pairsToHash } from "./run-codec.js";
import type { ScriptWriter } from "./script-writer.js";

// Claims and leases on Redis: the `claim` script picks the run (lua/claim.ts), `renew` extends its lease.

/**
 * Per owner, the request ids of its claims that failed: each may have been applied all the same
 * (its reply lost, or the claim sent again on a new connection after its caller gave up on it).
 * Each of the owner's next claims is sent with one of those ids, and so gets the run claimed by
 * it, if any, rather than leaving that run claimed by nobody who knows until its lease runs out.
 * A worker makes several claims at once, so several may fail together.
 */
export type UnansweredClaims = Map<string, string[]>;

export async function claimRun(w: ScriptWriter, unanswered: UnansweredClaims, options: ClaimOptions): Promise<Claim | undefined> {
  // Taken, not read: two claims sent at once with one id would get one run for both.
  const request = unanswered.get(options.owner)?.shift() ?? newId("claim", 12);
  let reply;
  const sent = Date.now();
  try {
    reply = await w.write(
      "claim",
      w
        .args()
        .add(options.owner, options.leaseMs, request, options.runId ?? "")
        .strings(options.versions)
        .strings(options.exclude ?? [])
        .add(options.takeOver === false ? "0" : "1")
        .tuples(Object.entries(options.runsAtOnce ?? {}), ([name, limit]) => [name, limit]),
    );
  } catch (error) {
    unanswered.set(options.owner, [...(unanswered.get(options.owner) ?? []), request]);
    throw error;
  }
  if (reply[0] === "none") return undefined;
  if (reply[0] !== "claimed") throw refusal(reply);
  const [, fence, recovered, hash, previous, now] = reply as [string, number, number, string[], string | null, number];
  const run = decodeRun(pairsToHash(hash))!;
  // Measured from when the claim was sent, not answered: never less than the true difference, so
  // a worker never takes a time to have come before the server does (store-clock.ts).
  return { run, fence, recovered: recovered === 1, ...(recovered === 1 && previous ? { takenFrom: previous } : {}), storeAheadMs: now - sent };
}

export async function renewLease(w: ScriptWriter, runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
  const reply = await w.write("renew", w.args().add(runId, owner, fence, leaseMs));
  if (reply[0] !== "ok") throw refusal(reply, { id: "", runId, fence });
}
