import type { Redis } from "ioredis";
import { ConflictError } from "../../errors.js";
import type { CommandAnswer, CommandRecord, NewEvent } from "../records.js";
import type { CommitResult } from "../store.js";
import type { RedisKeys } from "./keys.js";
import { listOldestFirst, recordsByIds } from "./queries.js";
import type { ScriptWriter } from "./script-writer.js";

// Operator commands on Redis: a hash of commands per run, and one of their answers beside it.

export async function submitCommand(w: ScriptWriter, command: CommandRecord, event: NewEvent): Promise<CommitResult> {
  const reply = await w.write("submitCommand", w.args().add(command.id, command.runId, command.createdAt, JSON.stringify(command), JSON.stringify(event)));
  if (reply[0] === "exists") throw new ConflictError(`command ${command.id} already exists`);
  return w.result(reply, [event]);
}

export async function answerCommand(w: ScriptWriter, answer: CommandAnswer, event: NewEvent): Promise<CommitResult> {
  const reply = await w.write("answerCommand", w.args().add(answer.id, answer.status, JSON.stringify(answer), JSON.stringify(event)));
  return w.result(reply, [event]);
}

export async function commandsByIds(client: Redis, keys: RedisKeys, ids: string[]): Promise<CommandRecord[]> {
  const rows = await recordsByIds(client, keys, "command-runs", ["commands", "answers"], ids);
  return rows.map(([json, answer]) => withAnswer(json!, answer ?? null));
}

export function listCommands(client: Redis, keys: RedisKeys, filter: { runId?: string; status?: CommandRecord["status"]; limit?: number }): Promise<CommandRecord[]> {
  return listOldestFirst(client, keys, "commands", filter, {
    ofRun: async (runId) => {
      const [commands, answers] = await Promise.all([client.hgetall(keys.runPart(runId, "commands")), client.hgetall(keys.runPart(runId, "answers"))]);
      return Object.entries(commands).map(([id, json]) => withAnswer(json, answers[id] ?? null));
    },
    byIds: (ids) => commandsByIds(client, keys, ids),
  });
}

function withAnswer(json: string, answer: string | null): CommandRecord {
  return { ...(JSON.parse(json) as CommandRecord), ...(answer === null ? {} : (JSON.parse(answer) as CommandAnswer)) };
}
