import { ConflictError, StoreError, errorMessage } from "../errors.js";
import { derivedId } from "../ids.js";
import { CommandDelivery } from "../operator/command-delivery.js";
import { WorkflowVersions } from "../operator/workflow-versions.js";
import type { EventRecord, InterruptRecord } from "../store/records.js";
import type { Claim, Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import { repeatUntil } from "./periodic.js";

/** Who gives a deadline's answer, as its resolution and its command say. */
export const DEADLINE_ACTOR = "timeout";
/** How often a worker lists the pending interrupts afresh; their events tell it of new ones meanwhile. */
const RELOAD_MS = 60_000;
/** How long an answer that failed (the store did not answer) waits before it is tried again. */
const RETRY_MS = 5_000;
/** setTimeout's longest wait (about 24.8 days): a later deadline is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Gives the answer of each interrupt whose deadline passes unanswered (`InterruptRecord.deadline`),
 * as actor `timeout`, through the operator's command path: applied here to a run nobody holds,
 * queued for the worker that holds one. Every worker watches; the command's id is the interrupt's
 * own, so only one of them records it. Deadlines are kept in memory from the pending interrupts
 * (listed at start and every minute) and the store's interrupt events, and judged on the store's
 * clock: a deadline that passed while no worker ran is answered as soon as one starts.
 */
export class DeadlineWatch {
  /** Pending interrupts' deadlines, by interrupt id: when to look at each next (store clock). */
  private readonly deadlines = new Map<string, number>();
  private readonly delivery: CommandDelivery;
  private timer: NodeJS.Timeout | undefined;
  private signal: AbortSignal | undefined;
  private aheadMs = 0;
  /** One look at the due deadlines at a time: the timer's, a reload's, a drain's. */
  private turn: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly store: Store,
    secretKeys: readonly string[],
    private readonly notify: (notice: WorkerNotice) => void,
  ) {
    this.delivery = new CommandDelivery(store, new WorkflowVersions(store), {
      actor: DEADLINE_ACTOR,
      secretKeys,
      answerTimeoutMs: 2_000,
      totalTimeoutMs: 30_000,
      onWaiting: undefined,
    });
  }

  /** The store's clock, as a claim measured it (Redis: the server's). */
  clockFrom(claim: Pick<Claim, "storeAheadMs">): void {
    this.aheadMs = claim.storeAheadMs ?? 0;
  }

  /** Watches until `signal` aborts: lists the pending interrupts now and every minute, and sets a timer for the next deadline. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    signal.addEventListener("abort", () => clearTimeout(this.timer), { once: true });
    repeatUntil(signal, 0, RELOAD_MS, async () => {
      try {
        await this.reload();
      } catch (error) {
        // The claim loop reports a failing store, once.
        if (!(error instanceof StoreError)) this.notify({ level: "warn", kind: "deadline-answered", message: `looking for interrupts past their deadline failed: ${errorMessage(error)}; trying again later` });
      }
    });
  }

  /** An interrupt event the worker's event watch saw: a new deadline, or one that no longer applies. */
  seen(event: EventRecord): void {
    const payload = event.payload as { interruptId?: string; deadline?: number };
    if (payload.interruptId === undefined) return;
    if (event.type === "interrupt.resolved") this.deadlines.delete(payload.interruptId);
    else if (event.type === "interrupt.created" && typeof payload.deadline === "number") {
      this.deadlines.set(payload.interruptId, payload.deadline);
      this.arm();
    }
  }

  /** Lists the pending interrupts afresh and answers those past their deadline; returns how many it answered. */
  async reload(): Promise<number> {
    const pending = await this.store.listInterrupts({ status: "pending" });
    this.deadlines.clear();
    for (const interrupt of pending) if (interrupt.deadline) this.deadlines.set(interrupt.id, interrupt.deadline.at);
    return this.answerDue();
  }

  /** Answers the interrupts whose deadline has passed; returns how many it answered. */
  answerDue(): Promise<number> {
    this.turn = this.turn.then(async () => {
      let answered = 0;
      const now = this.now();
      for (const [id, at] of [...this.deadlines]) {
        if (at > now) continue;
        this.deadlines.delete(id);
        if (await this.answer(id)) answered++;
      }
      this.arm();
      return answered;
    });
    return this.turn;
  }

  private now(): number {
    return Date.now() + this.aheadMs;
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (!this.signal || this.signal.aborted || this.deadlines.size === 0) return;
    const next = Math.min(...this.deadlines.values());
    this.timer = setTimeout(() => void this.answerDue(), Math.min(MAX_TIMER_MS, Math.max(0, next - this.now())));
    this.timer.unref();
  }

  /** Gives one interrupt its deadline's answer, if it is still pending and due; whether it did. */
  private async answer(id: string): Promise<boolean> {
    let interrupt: InterruptRecord | undefined;
    try {
      interrupt = await this.store.getInterrupt(id);
      if (!interrupt || interrupt.status !== "pending" || !interrupt.deadline) return false;
      if (interrupt.deadline.at > this.now()) {
        this.deadlines.set(id, interrupt.deadline.at);
        return false;
      }
      const { runId, node, deadline } = interrupt;
      await this.delivery.submit(runId, "resolve", { interruptIds: [id], deadline: true }, unansweredReason(interrupt), derivedId("cmd", id, "deadline"));
      this.notify({ level: "info", kind: "deadline-answered", runId, node, message: `interrupt ${id} of run ${runId} (${node}) had no answer by its deadline: ${deadline.decision}` });
      return true;
    } catch (error) {
      // Another worker gave the answer first, or a person did, or the run ended meanwhile.
      if (error instanceof ConflictError) return false;
      this.deadlines.set(id, this.now() + RETRY_MS);
      const where = interrupt ? ` of run ${interrupt.runId} (${interrupt.node})` : "";
      this.notify({ level: "warn", kind: "deadline-answered", ...(interrupt ? { runId: interrupt.runId, node: interrupt.node } : {}), message: `answering interrupt ${id}${where} at its deadline failed: ${errorMessage(error)}; trying again in ${RETRY_MS / 1000} s` });
      return false;
    }
  }
}

/** What the resolution says of an interrupt nobody answered: how long it waited, and until when. */
function unansweredReason(interrupt: InterruptRecord): string {
  const at = interrupt.deadline!.at;
  return `nobody answered within ${spoken(at - interrupt.createdAt)} (deadline ${new Date(at).toISOString()})`;
}

/** A duration as people say it: 90 s, 45 min, 24 h, 3 d. */
function spoken(ms: number): string {
  if (ms < 10_000) return `${Math.round(ms / 100) / 10} s`;
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 120 * 60) return `${Math.round(s / 60)} min`;
  if (s < 72 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}
