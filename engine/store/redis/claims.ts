import { newId } from "../../ids.js";
import type { Claim, ClaimOptions } from "../store.js";
import { refusal } from "./replies.js";
import { decodeRun, pairsToHash } from "./run-codec.js";
import type { ScriptWriter } from "./script-writer.js";

// Claims and leases on Redis: the `claim` script picks the run (lua/claim.ts), `renew` extends its lease.

export async function claimRun(w: ScriptWriter, options: ClaimOptions): Promise<Claim | undefined> {
  const reply = await w.write(
    "claim",
    w
      .args()
      .add(options.owner, options.leaseMs, newId("claim", 12), options.runId ?? "")
      .strings(options.versions)
      .strings(options.exclude ?? [])
      .add(options.takeOver === false ? "0" : "1"),
  );
  if (reply[0] === "none") return undefined;
  if (reply[0] !== "claimed") throw refusal(reply);
  const [, fence, recovered, hash, previous] = reply as [string, number, number, string[], string | null];
  const run = decodeRun(pairsToHash(hash))!;
  return { run, fence, recovered: recovered === 1, ...(recovered === 1 && previous ? { takenFrom: previous } : {}) };
}

export async function renewLease(w: ScriptWriter, runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
  const reply = await w.write("renew", w.args().add(runId, owner, fence, leaseMs));
  if (reply[0] !== "ok") throw refusal(reply, { id: "", runId, fence });
}
