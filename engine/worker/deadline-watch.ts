import { ConflictError, errorMessage } from "../errors.js";
import { derivedId } from "../ids.js";
import { CommandDelivery } from "../operator/command-delivery.js";
import { WorkflowVersions } from "../operator/workflow-versions.js";
import { Operator } from "../operator/operator.js";
import { DEADLINE_ACTOR } from "../runtime/deadlines.js";
import { TERMINAL_RUN_STATUSES, type EventRecord, type InterruptRecord, type RunRecord } from "../store/records.js";
import type { Claim, Deadline, Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import { EarliestTimer } from "./earliest-timer.js";
import { lookUntil } from "./periodic.js";

/** How often a worker lists the pending interrupts and the runs not ended afresh; their events tell it of new ones meanwhile. */
const RELOAD_MS = 60_000;
/** Events after which a run has ended: its deadline no longer applies. */
const RUN_ENDS = new Set(["run.succeeded", "run.failed", "run.canceled"]);
/** How long an answer that failed (the store did not answer) waits before it is tried again. */
const RETRY_MS = 5_000;

/** What has a deadline: an interrupt (answered at it) or a run (canceled at it). */
type Due = Pick<Deadline, "kind" | "id">;

/**
 * Keeps the deadlines of interrupts (`InterruptRecord.deadline`: the answer given when nobody
 * answered by then) and of runs (`RunRecord.deadlineAt`: canceled if not ended by then), and acts
 * on each as it passes, as actor `timeout`, through the operator's command path: applied here to a
 * run nobody holds, queued for the worker that holds one. Every worker watches; the command's id
 * derives from the interrupt or run, so only one of them records it. Deadlines are kept in memory
 * from the store's list of them (`listDeadlines`, read from its indexes at start and every minute)
 * and the store's events, and judged on the store's clock: a deadline that passed while no worker
 * ran is acted on as soon as one starts.
 */
export class DeadlineWatch {
  /** Deadlines by `kind:id`: when to look at each next (store clock). */
  private readonly deadlines = new Map<string, { due: Due; at: number }>();
  private readonly delivery: CommandDelivery;
  private readonly operator: Operator;
  private readonly timer = new EarliestTimer(() => void this.actOnDue());
  private aheadMs = 0;
  /** How many deadlines it has acted on (interrupts answered, runs canceled), for a drain to tell whether to look again. */
  acted = 0;
  /** One look at the due deadlines at a time: the timer's, a reload's, a drain's. */
  private turn: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly store: Store,
    secretKeys: readonly string[],
    private readonly notify: (notice: WorkerNotice) => void,
    /** Whether this worker has just claimed the run and is about to look at it (it cancels one past its deadline itself). */
    private readonly claiming: (run: RunRecord) => boolean = () => false,
  ) {
    this.delivery = new CommandDelivery(store, new WorkflowVersions(store), {
      actor: DEADLINE_ACTOR,
      secretKeys,
      answerTimeoutMs: 2_000,
      totalTimeoutMs: 30_000,
      onWaiting: undefined,
    });
    this.operator = new Operator(store, { actor: DEADLINE_ACTOR, secretKeys });
  }

  /** The store's clock, as a claim measured it (Redis: the server's). */
  clockFrom(claim: Pick<Claim, "storeAheadMs">): void {
    this.aheadMs = claim.storeAheadMs ?? 0;
  }

  /** Watches until `signal` aborts: lists the pending interrupts now and every minute, and sets a timer for the next deadline. */
  start(signal: AbortSignal): void {
    this.timer.until(signal);
    lookUntil(signal, RELOAD_MS, () => this.reload(), (error) => this.notify({ level: "warn", kind: "deadline-answered", message: `looking for interrupts and runs past their deadline failed: ${errorMessage(error)}; trying again later` }));
  }

  /** An event the worker's event watch saw (`DEADLINE_EVENTS`): a new deadline, or one that no longer applies. */
  seen(event: EventRecord): void {
    const payload = event.payload as { interruptId?: string; deadline?: number; deadlineAt?: number };
    let changed = false;
    if (event.type === "interrupt.created" && payload.interruptId !== undefined && typeof payload.deadline === "number") changed = this.keep({ kind: "interrupt", id: payload.interruptId }, payload.deadline);
    else if (event.type === "run.created" && typeof payload.deadlineAt === "number") changed = this.keep({ kind: "run", id: event.runId }, payload.deadlineAt);
    else if (event.type === "interrupt.resolved" && payload.interruptId !== undefined) changed = this.forget({ kind: "interrupt", id: payload.interruptId });
    else if (RUN_ENDS.has(event.type)) changed = this.forget({ kind: "run", id: event.runId });
    // Most runs and interrupts have no deadline: their ends leave the timer as it is.
    if (changed) this.arm();
  }

  /** Lists the deadlines of the pending interrupts and the runs not ended afresh, and acts on those past; returns on how many it acted. */
  async reload(): Promise<number> {
    const deadlines = await this.store.listDeadlines();
    this.deadlines.clear();
    for (const { kind, id, at } of deadlines) this.keep({ kind, id }, at);
    return this.actOnDue();
  }

  /** Whether a run just claimed is past its deadline (on the store's clock, as the claim measured it). */
  overdue(claim: Pick<Claim, "run" | "storeAheadMs">): boolean {
    const at = claim.run.deadlineAt;
    return typeof at === "number" && at <= Date.now() + (claim.storeAheadMs ?? 0);
  }

  /** Cancels a run past its deadline now (a worker claimed it, and let it go unexecuted); whether it did. */
  cancelOverdue(runId: string): Promise<boolean> {
    const turn = this.turn.then(async () => {
      const canceled = await this.cancel(runId);
      if (canceled) this.acted++;
      return canceled;
    });
    this.turn = turn.then(() => 0);
    return turn;
  }

  /** Acts on the deadlines that have passed; returns on how many it acted. */
  actOnDue(): Promise<number> {
    this.turn = this.turn.then(async () => {
      let acted = 0;
      const now = this.now();
      for (const [key, { due, at }] of [...this.deadlines]) {
        if (at > now) continue;
        this.deadlines.delete(key);
        if (await (due.kind === "interrupt" ? this.answer(due.id) : this.cancel(due.id))) acted++;
      }
      this.acted += acted;
      this.arm();
      return acted;
    });
    return this.turn;
  }

  private keep(due: Due, at: number): true {
    this.deadlines.set(`${due.kind}:${due.id}`, { due, at });
    return true;
  }

  /** Whether it had that deadline. */
  private forget(due: Due): boolean {
    return this.deadlines.delete(`${due.kind}:${due.id}`);
  }

  private now(): number {
    return Date.now() + this.aheadMs;
  }

  private arm(): void {
    this.timer.arm([...this.deadlines.values()].map((d) => d.at), this.now());
  }

  /** Gives one interrupt its deadline's answer, if it is still pending and due; whether it did. */
  private async answer(id: string): Promise<boolean> {
    let interrupt: InterruptRecord | undefined;
    try {
      interrupt = await this.store.getInterrupt(id);
      if (!interrupt || interrupt.status !== "pending" || !interrupt.deadline) return false;
      if (interrupt.deadline.at > this.now()) {
        this.keep({ kind: "interrupt", id }, interrupt.deadline.at);
        return false;
      }
      const { runId, node, deadline } = interrupt;
      await this.delivery.submit(runId, "resolve", { interruptIds: [id], deadline: true }, unansweredReason(interrupt), derivedId("cmd", id, "deadline"), true);
      this.notify({ level: "info", kind: "deadline-answered", runId, node, message: `interrupt ${id} of run ${runId} (${node}) had no answer by its deadline: ${deadline.decision}` });
      return true;
    } catch (error) {
      // Another worker gave the answer first, or a person did, or the run ended meanwhile.
      if (error instanceof ConflictError) return false;
      this.keep({ kind: "interrupt", id }, this.now() + RETRY_MS);
      const where = interrupt ? ` of run ${interrupt.runId} (${interrupt.node})` : "";
      this.notify({ level: "warn", kind: "deadline-answered", ...(interrupt ? { runId: interrupt.runId, node: interrupt.node } : {}), message: `answering interrupt ${id}${where} at its deadline failed: ${errorMessage(error)}; trying again in ${RETRY_MS / 1000} s` });
      return false;
    }
  }

  /** Cancels one run past its deadline, if it has not ended; whether it did. */
  private async cancel(id: string): Promise<boolean> {
    let run: RunRecord | undefined;
    try {
      run = await this.store.getRun(id);
      const at = run?.deadlineAt;
      if (!run || typeof at !== "number" || TERMINAL_RUN_STATUSES.includes(run.status) || this.claiming(run)) return false;
      if (at > this.now()) {
        this.keep({ kind: "run", id }, at);
        return false;
      }
      await this.operator.cancel(id, { reason: pastDeadlineReason(run.createdAt, at), commandId: derivedId("cmd", id, "deadline"), exclusive: true });
      this.notify({ level: "info", kind: "deadline-answered", runId: id, message: `run ${id} (${run.workflow}) had not ended by its deadline: canceled` });
      return true;
    } catch (error) {
      // Another worker canceled it first, or it ended meanwhile.
      if (error instanceof ConflictError) return false;
      this.keep({ kind: "run", id }, this.now() + RETRY_MS);
      this.notify({ level: "warn", kind: "deadline-answered", runId: id, message: `canceling run ${id} at its deadline failed: ${errorMessage(error)}; trying again in ${RETRY_MS / 1000} s` });
      return false;
    }
  }
}

/** Why a run past its deadline was canceled: how long it had, and until when. */
function pastDeadlineReason(createdAt: number, at: number): string {
  return `it had not ended ${spoken(at - createdAt)} after it started (deadline ${new Date(at).toISOString()})`;
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
