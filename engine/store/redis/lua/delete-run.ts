/**
 * Deletes a top-level run that has ended, with its child runs, and every key and index entry of
 * theirs (`Store.deleteRun`), checking the rule of `checkDeletion` first. Arguments: run id.
 * Replies: {'ok', {ids...}} | {'notfound', 'run', id} | {'child', parent id} | {'live', id, status}
 *
 * What grows with a run's length is left to PURGE_RUN, a bounded batch per call, so that deleting
 * a long run never holds the server for long: its events in the store-wide stream, its tasks'
 * index entries and its per-step task sets. Everything else goes here, at once: the run is gone
 * for every reader (its events stream and tasks hash are renamed out of the way); only the
 * store-wide event log shows its events until they are purged. The runs being purged are kept in
 * the hash `purging` (run id → highest per-step task set left), so a purge a crashed process left
 * unfinished is finished by the next deletion.
 *
 * An artifact goes when the last run that counted it goes (`refs`, counted by PUT_ARTIFACT);
 * one stored before artifacts were counted is kept.
 */
export const DELETE_RUN = `
local BATCH = 500
local function in_batches(items, fn)
  for i = 1, #items, BATCH do fn({ unpack(items, i, math.min(i + BATCH - 1, #items)) }) end
end

local function forget_records(owner_part, owner_index, indexes)
  local ids = redis.call('HKEYS', owner_part)
  in_batches(ids, function(batch)
    redis.call('HDEL', K.g(owner_index), unpack(batch))
    for _, index in ipairs(indexes) do redis.call('ZREM', K.g(index), unpack(batch)) end
  end)
end

local function forget_artifacts(id)
  for _, sha in ipairs(redis.call('SMEMBERS', K.part(id, 'artifacts'))) do
    local key = K.g('artifact:' .. sha)
    if redis.call('HEXISTS', key, 'refs') == 1 and redis.call('HINCRBY', key, 'refs', -1) <= 0 then redis.call('DEL', key) end
  end
end

local function delete_run(id)
  local rk = K.run(id)
  local f = redis.call('HMGET', rk, 'status', 'workflow', 'parentRunId', 'step')
  forget_records(K.part(id, 'interrupts'), 'interrupt-runs', { 'interrupts', 'interrupts:pending', 'deadlines:interrupts' })
  forget_records(K.part(id, 'commands'), 'command-runs', { 'commands', 'commands:pending' })
  forget_artifacts(id)
  redis.call('ZREM', K.g('runs'), id)
  redis.call('ZREM', K.g('runs:status:' .. f[1]), id)
  redis.call('ZREM', K.g('runs:workflow:' .. f[2]), id)
  redis.call('SREM', K.g('runs:running:' .. f[2]), id)
  redis.call('ZREM', K.g('deadlines:runs'), id)
  if f[3] then redis.call('ZREM', K.g('runs:children:{' .. f[3] .. '}'), id) else redis.call('ZREM', K.g('runs:top'), id) end
  redis.call('ZREM', K.g('live'), id)
  redis.call('ZREM', K.g('timers'), id)
  for _, part in ipairs({ 'events', 'tasks' }) do
    if redis.call('EXISTS', K.part(id, part)) == 1 then redis.call('RENAME', K.part(id, part), K.part(id, 'purge:' .. part)) end
  end
  redis.call('HSET', K.g('purging'), id, tonumber(f[4] or 0) + 1)
  -- Unlinked: a long run's checkpoints are freed off the server's main thread.
  redis.call('UNLINK', rk, K.g('runs:children:{' .. id .. '}'))
  for _, part in ipairs({ 'checkpoints', 'answers', 'interrupts', 'pending', 'commands', 'artifacts', 'waiters' }) do
    redis.call('UNLINK', K.part(id, part))
  end
end

local id = arg()
local f = redis.call('HMGET', K.run(id), 'status', 'parentRunId')
if not f[1] then return {'notfound', 'run', id} end
if f[2] then return {'child', f[2]} end
local tree = { id }
local i = 1
while i <= #tree do
  for _, child in ipairs(redis.call('ZRANGE', K.g('runs:children:{' .. tree[i] .. '}'), 0, -1)) do
    if redis.call('EXISTS', K.run(child)) == 1 then tree[#tree + 1] = child end
  end
  i = i + 1
end
for _, r in ipairs(tree) do
  local status = redis.call('HGET', K.run(r), 'status')
  if not TERMINAL[status] then return {'live', r, status} end
end
for _, r in ipairs(tree) do delete_run(r) end
return {'ok', tree}
`;

/**
 * One bounded batch (ARGV: run id, batch size) of the purge DELETE_RUN left for a deleted run:
 * first its events leave the store-wide stream, then its tasks' index entries go, then its
 * per-step task sets. Replies {'more'} while work is left, {'done'} once the run is forgotten.
 */
export const PURGE_RUN = `
local id = arg()
local batch = arg_num()
local top = tonumber(redis.call('HGET', K.g('purging'), id))
if not top then return {'done'} end
local events = K.part(id, 'purge:events')
local entries = redis.call('XRANGE', events, '-', '+', 'COUNT', batch)
if #entries > 0 then
  local ids = {}
  for i, entry in ipairs(entries) do ids[i] = entry[1] end
  redis.call('XDEL', K.g('events'), unpack(ids))
  redis.call('XDEL', events, unpack(ids))
  return {'more'}
end
local tasks = K.part(id, 'purge:tasks')
local fields = redis.call('HRANDFIELD', tasks, batch)
if #fields > 0 then
  redis.call('HDEL', K.g('task-runs'), unpack(fields))
  redis.call('HDEL', tasks, unpack(fields))
  return {'more'}
end
if top >= 0 then
  local sets = {}
  for step = math.max(0, top - batch + 1), top do sets[#sets + 1] = K.part(id, 'tasks') .. ':' .. step end
  redis.call('UNLINK', unpack(sets))
  redis.call('HSET', K.g('purging'), id, top - #sets)
  return {'more'}
end
redis.call('UNLINK', events, tasks)
redis.call('HDEL', K.g('purging'), id)
return {'done'}
`;
