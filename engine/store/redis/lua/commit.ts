/**
 * One atomic step commit (`Store.commit`), with the preconditions of `engine/store/rules.ts`
 * checked in the same order. Arguments after prefix and retention: commit id, run id, fence,
 * fenceOut (1 to give the run a new fence), expectHead (optional), expectStatus (list or absent), expectPending, run fields to set and to
 * delete, checkpoint (0 or 1 of id, n, step, bytes, json), tasks (id, runId, step, json),
 * interrupts (id, runId, status, createdAt, json, deadline time or ''), commands to store (id, createdAt, json),
 * command answers (id, status, json; each only while its command is pending), events, runs to wake.
 *
 * Replies: {'ok', {seq, runSeq...}} | {'duplicate'} | {'notfound', 'run', id} | {'stale', fence}
 * | {'head', head} | {'status', status} | {'missing-interrupt', id} | {'resolved', id, json} | {'gap', headN}
 * | {'command-exists', id} | {'notfound', 'command', id} | {'answered', id, answer json}
 */
export const COMMIT = `
local commit_id = arg()
local id = arg()
local fence = arg_num()
local fence_out = arg() == '1'
local check_head, expect_head = arg_optional()
local expect_status = arg_strings()
local expect_pending = arg_strings()
local set_fields = arg_tuples(2)
local del_fields = arg_strings()
local checkpoint = arg_tuples(5)[1]
local tasks = arg_tuples(4)
local interrupts = arg_tuples(6)
local submitted = arg_tuples(3)
local answers = arg_tuples(3)
local events = arg_strings()
local wake = arg_strings()

local rk = K.run(id)
local run = redis.call('HMGET', rk, 'id', 'lastCommit', 'fence', 'head', 'status', 'headN', '_leaseMs')
if not run[1] then return {'notfound', 'run', id} end
if run[7] then saw_fleet(tonumber(run[7])) end
if run[2] == commit_id then return {'duplicate'} end
if tonumber(run[3]) ~= fence then return {'stale', run[3]} end
local head = run[4] or nil
if check_head and head ~= expect_head then return {'head', head or ''} end
if expect_status then
  local allowed = false
  for _, s in ipairs(expect_status) do if s == run[5] then allowed = true end end
  if not allowed then return {'status', run[5]} end
end
for _, iid in ipairs(expect_pending) do
  local owner = redis.call('HGET', K.g('interrupt-runs'), iid)
  local json = owner and redis.call('HGET', K.part(owner, 'interrupts'), iid)
  if not json then return {'missing-interrupt', iid} end
  if redis.call('SISMEMBER', K.part(owner, 'pending'), iid) == 0 then return {'resolved', iid, json} end
end
if checkpoint and tonumber(checkpoint[2]) ~= tonumber(run[6]) + 1 then return {'gap', run[6]} end
local submitting = {}
for _, c in ipairs(submitted) do
  if redis.call('HEXISTS', K.g('command-runs'), c[1]) == 1 then return {'command-exists', c[1]} end
  submitting[c[1]] = true
end
for _, c in ipairs(answers) do
  if not submitting[c[1]] then
    local owner = redis.call('HGET', K.g('command-runs'), c[1])
    if not owner then return {'notfound', 'command', c[1]} end
    local earlier = redis.call('HGET', K.part(owner, 'answers'), c[1])
    if earlier then return {'answered', c[1], earlier} end
  end
end

redis.call('HSET', rk, 'lastCommit', commit_id)
if fence_out then redis.call('HSET', rk, 'fence', fmt(next_fence())) end
-- A run moved to another version (an upgrade) leaves its offer on the old version's stream:
-- withdrawn here, schedule() below offers it on the new one's, in this same script.
for _, p in ipairs(set_fields) do
  if p[1] == 'version' then
    local was = redis.call('HMGET', rk, 'version', '_offer')
    if was[2] and was[1] ~= p[2] then withdraw_offer(id, was[1], was[2]) end
  end
end
hset_pairs(rk, set_fields)
if #del_fields > 0 then redis.call('HDEL', rk, unpack(del_fields)) end
if checkpoint then
  redis.call('RPUSH', K.part(id, 'checkpoints'), checkpoint[5])
  redis.call('HSET', rk, 'head', checkpoint[1], 'headN', checkpoint[2], 'step', checkpoint[3])
  redis.call('HINCRBY', rk, '_cpBytes', checkpoint[4])
end
for _, t in ipairs(tasks) do
  redis.call('HSET', K.part(t[2], 'tasks'), t[1], t[4])
  redis.call('SADD', K.part(t[2], 'tasks') .. ':' .. t[3], t[1])
  redis.call('HSET', K.g('task-runs'), t[1], t[2])
end
for _, i in ipairs(interrupts) do
  redis.call('HSET', K.part(i[2], 'interrupts'), i[1], i[5])
  redis.call('HSET', K.g('interrupt-runs'), i[1], i[2])
  redis.call('ZADD', K.g('interrupts'), i[4], i[1])
  if i[3] == 'pending' then
    redis.call('SADD', K.part(i[2], 'pending'), i[1])
    redis.call('ZADD', K.g('interrupts:pending'), i[4], i[1])
  else
    redis.call('SREM', K.part(i[2], 'pending'), i[1])
    redis.call('ZREM', K.g('interrupts:pending'), i[1])
  end
  if i[3] == 'pending' and i[6] ~= '' then
    redis.call('ZADD', K.g('deadlines:interrupts'), i[6], i[1])
  elseif i[6] ~= '' then
    redis.call('ZREM', K.g('deadlines:interrupts'), i[1])
  end
end
for _, c in ipairs(submitted) do
  redis.call('HSET', K.part(id, 'commands'), c[1], c[3])
  redis.call('HSET', K.g('command-runs'), c[1], id)
  redis.call('ZADD', K.g('commands'), c[2], c[1])
  redis.call('ZADD', K.g('commands:pending'), c[2], c[1])
end
for _, c in ipairs(answers) do
  redis.call('HSET', K.part(redis.call('HGET', K.g('command-runs'), c[1]), 'answers'), c[1], c[3])
  if c[2] ~= 'pending' then redis.call('ZREM', K.g('commands:pending'), c[1]) end
end
for _, waiter in ipairs(wake) do
  local wk = K.run(waiter)
  -- wokenRun (rules.ts): claimable now, whatever it was parked on.
  if redis.call('HGET', wk, 'status') == 'queued' then
    redis.call('HDEL', wk, 'waitingOn', 'wakeAt')
    redis.call('HSET', wk, 'updatedAt', NOW)
    index_run(waiter, 'queued')
    schedule(waiter)
  end
end
redis.call('HSET', rk, 'pendingInterrupts', redis.call('SCARD', K.part(id, 'pending')))
-- movesUpdatedAt (rules.ts): a command refused on an ended run is not activity.
local ended = run[5] == 'succeeded' or run[5] == 'failed' or run[5] == 'canceled'
if not ended or #set_fields > 0 or #del_fields > 0 then redis.call('HSET', rk, 'updatedAt', NOW) end
local numbers = append_events(id, events)
index_run(id, run[5])
schedule(id)
return {'ok', numbers}
`;
