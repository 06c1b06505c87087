import { existsSync } from "node:fs";
import { SCHEDULE_TAG, Schedules, checkCron, checkScheduleFields, checkTimezone, nextCronTime, storeVersion, zonedTime, type BackfillTime, type ScheduleRecord, type ScheduleSpec } from "../../engine/index.js";
import { defineCommand, type CommandContext } from "../cli/command.js";
import { EXIT, UsageError, type ExitCode } from "../cli/errors.js";
import { kebab } from "../cli/flags.js";
import { readJsonArgument, secondsFlag, tagFlags } from "../cli/inputs.js";
import type { Output } from "../cli/output.js";
import { checkedVersion } from "../cli/workflow-file.js";
import { exactLength, plural } from "../text/plain.js";
import { changeText, nextText, recentChanges, scheduleState } from "../text/schedule-text.js";

const ACTIONS = ["add", "update", "list", "show", "pause", "resume", "remove", "trigger", "backfill"] as const;
type Action = (typeof ACTIONS)[number];

const FLAGS = {
  cron: { type: "string" },
  timezone: { type: "string" },
  input: { type: "string" },
  overlap: { type: "string" },
  catchUp: { type: "string" },
  version: { type: "string" },
  tag: { type: "string", isMultiple: true },
  paused: { type: "boolean" },
  force: { type: "boolean" },
  reason: { type: "string" },
  jitter: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  yes: { type: "boolean" },
} as const;

/** Which flags each action takes (the global ones aside). */
const TAKES: Record<Action, readonly (keyof typeof FLAGS)[]> = {
  add: ["cron", "timezone", "input", "overlap", "catchUp", "version", "tag", "jitter", "paused"],
  update: ["cron", "timezone", "input", "overlap", "catchUp", "version", "tag", "jitter", "reason"],
  list: [],
  show: [],
  pause: ["reason"],
  resume: ["reason"],
  remove: [],
  trigger: ["force"],
  backfill: ["from", "to", "yes"],
};

export const schedule = defineCommand({
  name: "schedule",
  usage:
    "schedule add <id> <workflow|workflow.json> --cron EXPR [--timezone TZ] [--input JSON|@file] [--overlap skip|allow] [--catch-up one|none] [--version V] [--tag NAME=VALUE ...] [--jitter LENGTH] [--paused] | update <id> [same flags] [--reason TEXT] | list | show <id> | pause <id> [--reason TEXT] | resume <id> [--reason TEXT] | remove <id> | trigger <id> [--force] | backfill <id> --from TIME --to TIME [--yes]",
  summary: "start runs of a workflow at cron times (a worker fires them): add, update, list, show, pause, resume, remove, trigger, backfill",
  details: `A schedule starts a run of its workflow at each time of its cron expression (five fields,
minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly), read
in --timezone (an IANA name; default UTC). Workers fire schedules: start at least one
(pitwall worker). Each time starts one run however many workers run, with the id
<schedule>-<time> (nightly-20261203T020000Z) and the tag schedule=<id>.
The workflow is a stored workflow's name (its latest stored version when it fires, or --version),
or a workflow file, which is stored first and is the version it starts. --version takes a stored
version or the start of one (as listings print it), or latest (none pinned: the latest stored). --input is each run's input, checked now as start
checks it.
--overlap skip (default) starts no run while the last one the schedule started has not ended, and
says so (show: LAST SKIP); allow starts one anyway.
--catch-up one (default) starts one run for the times missed while no worker ran; none skips them.
--jitter 5m (or seconds, 90s, 1h) fires each time up to that much later, the same in every worker
(spreads the runs of many schedules of one time); the run's id keeps the time; 0 removes it.
pause stops it firing; resume fires from its next time after now (--reason TEXT, there and on
update, is kept with who changed it: show's CHANGED line). trigger starts a run now
(keeping to --overlap, unless --force). remove deletes the schedule (not its runs).
backfill starts the runs of the cron times from --from up to --to (not included; both in the past;
a date or date and time, read in the schedule's time zone unless given with Z or an offset) that
have none, each with the id it would have had: without --yes it only lists them.
--json prints the schedule record (list: an array; trigger: { "runId", "existed" }; remove: { "removed" };
backfill: an array of { "at", "time", "runId", "outcome", "error"? }).`,
  flags: FLAGS,
  args: { min: 1, max: 3 },
  createsStore: true,
  async run(ctx) {
    const [action, id, workflow] = ctx.args as [string, string | undefined, string | undefined];
    if (!(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`schedule ${action}: give one of ${ACTIONS.join(", ")}`);
    const act = action as Action;
    const wanted = act === "add" ? 3 : act === "list" ? 1 : 2;
    if (ctx.args.length !== wanted) throw new UsageError(`schedule ${act} takes ${["no argument", "a schedule id", "a schedule id and a workflow"][wanted - 1]} (pitwall help schedule)`);
    const given = (flag: keyof typeof FLAGS) => { const value: unknown = ctx.flags[flag]; return value !== undefined && !(Array.isArray(value) && value.length === 0); };
    const stray = (Object.keys(FLAGS) as (keyof typeof FLAGS)[]).find((flag) => given(flag) && !TAKES[act].includes(flag));
    if (stray) throw new UsageError(`--${kebab(stray)} does not go with schedule ${act}`);
    if (act === "list") return list(ctx);
    if (act === "show") return show(ctx, id!);
    if (act === "add") return add(ctx, id!, workflow!);
    // Every other action writes: the store must exist (none is made for it).
    await ctx.store(true);
    const schedules = new Schedules(await ctx.store(), ctx.global.actor);
    const why = ctx.flags.reason !== undefined ? { reason: ctx.flags.reason } : {};
    if (act === "update") return print(ctx.out, await schedules.update(id!, specFlags(ctx.flags), why));
    if (act === "pause") return print(ctx.out, await schedules.pause(id!, why));
    if (act === "resume") return print(ctx.out, await schedules.resume(id!, why));
    if (act === "remove") {
      await schedules.delete(id!);
      if (ctx.out.json) ctx.out.value({ removed: id });
      else ctx.out.note(`schedule ${id} removed; the runs it started are kept`);
      return EXIT.ok;
    }
    if (act === "backfill") return backfill(ctx, schedules, id!);
    const fired = await schedules.trigger(id!, { ...(ctx.flags.force ? { force: true } : {}) });
    if (ctx.out.json) ctx.out.value(fired);
    else ctx.out.line(fired.runId);
    return EXIT.ok;
  },
});

type Ctx = CommandContext<typeof FLAGS>;

/** The schedule's fields the flags give (checked where they can be without the store). */
function specFlags(flags: Ctx["flags"]): Partial<Omit<ScheduleSpec, "id">> {
  const input = flags.input === undefined ? undefined : readJsonArgument("input", flags.input);
  if (input !== undefined && (input === null || typeof input !== "object" || Array.isArray(input))) throw new UsageError(`--input: give a JSON object, the runs' starting state`);
  const tags = tagFlags(flags.tag);
  return {
    ...(flags.cron !== undefined ? { cron: checkCron(flags.cron) } : {}),
    ...(flags.timezone !== undefined ? { timezone: checkTimezone(flags.timezone) } : {}),
    ...(input !== undefined ? { input: input as Record<string, unknown> } : {}),
    ...(flags.overlap !== undefined ? { overlap: flags.overlap as NonNullable<ScheduleSpec["overlap"]> } : {}),
    ...(flags.catchUp !== undefined ? { catchUp: flags.catchUp as NonNullable<ScheduleSpec["catchUp"]> } : {}),
    // `latest`: no version pinned, the workflow's latest stored one when it fires.
    ...(flags.version !== undefined ? { version: flags.version === "latest" ? null : flags.version } : {}),
    ...(tags ? { tags } : {}),
    ...(flags.jitter !== undefined ? { jitterSeconds: /^0+(\.0*)?[smhd]?$/.test(flags.jitter.trim()) ? 0 : secondsFlag("jitter", flags.jitter) } : {}),
  };
}

async function add(ctx: Ctx, id: string, workflow: string): Promise<ExitCode> {
  if (ctx.flags.cron === undefined) throw new UsageError("schedule add needs --cron EXPR (five fields, or @hourly, @daily, ...)");
  const spec = { ...specFlags(ctx.flags), ...(ctx.flags.paused ? { paused: true } : {}) };
  // A file is stored first (and makes the store, as start does); a name must be in the store already.
  const file = existsSync(workflow) || /\.(json|jsonc)$/.test(workflow) ? checkedVersion(workflow) : undefined;
  // Checked against the file before the store is opened: a refused schedule makes no store file.
  if (file) checkScheduleFields({ id, cron: spec.cron!, timezone: spec.timezone ?? "UTC", overlap: spec.overlap ?? "skip", catchUp: spec.catchUp ?? "one", paused: spec.paused ?? false, input: spec.input ?? {}, tags: spec.tags, jitterSeconds: spec.jitterSeconds }, file);
  else await ctx.store(true);
  const store = await ctx.store();
  const schedules = new Schedules(store, ctx.global.actor);
  if (file && !(await store.getSchedule(id))) await storeVersion(store, file);
  // A file given is the version it starts (as start runs the file given), until --version says otherwise.
  return print(ctx.out, await schedules.create({ id, workflow: file?.definition.name ?? workflow, cron: spec.cron!, ...spec, ...(file && spec.version === undefined ? { version: file.version } : {}) }));
}

async function backfill(ctx: Ctx, schedules: Schedules, id: string): Promise<ExitCode> {
  if (ctx.flags.from === undefined || ctx.flags.to === undefined) throw new UsageError("schedule backfill needs --from TIME and --to TIME (2026-11-20, 2026-11-20T03:00, in the schedule's time zone)");
  const dryRun = !ctx.flags.yes;
  const times = await schedules.backfill(id, { from: ctx.flags.from, to: ctx.flags.to, dryRun });
  const timezone = (await schedules.get(id)).timezone;
  const failed = times.filter((t) => t.outcome === "failed");
  if (ctx.out.json) ctx.out.value(times.map((t) => ({ ...t, time: new Date(t.at).toISOString() })));
  else {
    await ctx.out.list(times, "no time of its cron in that stretch", ["TIME", "RUN", "OUTCOME"], (t) => [zonedTime(t.at, timezone), t.runId, t.outcome === "failed" ? `failed: ${t.error}` : t.outcome]);
    const count = (outcome: BackfillTime["outcome"]) => times.filter((t) => t.outcome === outcome).length;
    const had = `${plural(count("existed"), "time")} had ${count("existed") === 1 ? "its run" : "theirs"} already`;
    if (dryRun) ctx.out.note(`would start ${plural(count("would start"), "run")} (${had}): nothing started; give --yes to start them`);
    else ctx.out.note(`started ${plural(count("started"), "run")}; ${had}${failed.length > 0 ? `; ${failed.length} failed` : ""}`);
  }
  return failed.length > 0 ? EXIT.conflict : EXIT.ok;
}

async function list(ctx: Ctx): Promise<ExitCode> {
  const schedules = await new Schedules(await ctx.store(true), ctx.global.actor).list();
  const now = Date.now();
  await ctx.out.list(schedules, "no schedules (pitwall schedule add makes one)", ["ID", "WORKFLOW", "CRON", "TZ", "NEXT", "LAST RUN", "STATE"], (s) => [
    s.id,
    s.version ? `${s.workflow}@${s.version.slice(0, 8)}` : s.workflow,
    s.cron,
    s.timezone,
    nextText(s, now),
    s.lastRunId ?? "-",
    scheduleState(s),
  ]);
  return EXIT.ok;
}

/** The schedule, its next times after the next one, and the runs it started last (Temporal's schedule describe). */
async function show(ctx: Ctx, id: string): Promise<ExitCode> {
  const store = await ctx.store(true);
  const s = await new Schedules(store, ctx.global.actor).get(id);
  if (ctx.out.json) return print(ctx.out, s);
  const width = printLines(ctx.out, s);
  // Paused, its next time means nothing yet (resumed, it fires from its next time after then).
  const later: number[] = [];
  for (let at = s.paused ? null : s.nextAt; at !== null && later.length < 3; ) {
    at = nextCronTime(s.cron, s.timezone, at);
    if (at !== null) later.push(at);
  }
  if (later.length > 0) ctx.out.line(`${"then".padEnd(width)}  ${later.map((at) => zonedTime(at, s.timezone)).join(", ")}`);
  const { runs } = await store.listRuns({ tags: { [SCHEDULE_TAG]: s.id }, limit: RECENT_RUNS });
  // Newest time first: a run's id holds the time it was started for.
  const recent = runs.sort((a, b) => (a.id < b.id ? 1 : -1));
  recent.forEach((run, i) => ctx.out.line(`${(i === 0 ? "runs" : "").padEnd(width)}  ${run.id}  ${run.reason ? `${run.status} (${run.reason})` : run.status}`));
  if (recent.length === 0) ctx.out.line(`${"runs".padEnd(width)}  none yet`);
  recentChanges(s, RECENT_CHANGES).forEach((c, i) => ctx.out.line(`${(i === 0 ? "history" : "").padEnd(width)}  ${changeText(c, s.timezone)}`));
  return EXIT.ok;
}

/** How many of a schedule's runs `show` lists, the last ones updated. */
const RECENT_RUNS = 5;
/** How many of its changes, the last ones (`--json` has every one kept). */
const RECENT_CHANGES = 5;

function print(out: Output, s: ScheduleRecord): ExitCode {
  if (out.json) out.value(s);
  else printLines(out, s);
  return EXIT.ok;
}

/** The schedule's fields, a line each; returns the width of their names, for lines printed after them. */
function printLines(out: Output, s: ScheduleRecord): number {
  const lines: [string, string][] = [
    ["schedule", s.id],
    ["workflow", s.version ? `${s.workflow} (version ${s.version})` : `${s.workflow} (its latest stored version)`],
    ["cron", `${s.cron} (${s.timezone})`],
    ["next", nextText(s, Date.now())],
    ["state", scheduleState(s)],
    ["overlap", s.overlap === "skip" ? "skip (no run while the last has not ended)" : "allow"],
    ["catch-up", s.catchUp === "one" ? "one (one run for the times missed)" : "none (missed times are skipped)"],
    ...(s.jitterSeconds ? [["jitter", `up to ${exactLength(s.jitterSeconds)} (each time fires that much later at most)`] as [string, string]] : []),
    ["input", JSON.stringify(s.input)],
    ...(s.tags ? [["tags", Object.entries(s.tags).map(([k, v]) => `${k}=${v}`).join(" ")] as [string, string]] : []),
    ["last run", s.lastRunId === null ? "-" : `${s.lastRunId}${s.lastFiredAt !== null && !s.lastSkip ? ` (for ${zonedTime(s.lastFiredAt, s.timezone)})` : ""}`],
    ...(s.lastSkip ? [["last skip", `${zonedTime(s.lastSkip.at, s.timezone)}: ${s.lastSkip.reason}`] as [string, string]] : []),
    ...(s.updatedBy ? [["changed", `${zonedTime(s.updatedAt, s.timezone)} by ${s.updatedBy}${s.updateReason ? `: ${s.updateReason}` : ""}`] as [string, string]] : []),
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  for (const [key, value] of lines) out.line(`${key.padEnd(width)}  ${value}`);
  return width;
}
