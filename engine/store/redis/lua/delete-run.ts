/**
 * Deletes a top-level run that has ended, with its child runs, and every key and index entry of
 * theirs (`Store.deleteRun`), checking the rule of `checkDeletion` first. Arguments: run id.
 * Replies: {'ok', {ids...}} | {'notfound', 'run', id} | {'child', parent id} | {'live', id, status}
 *
 * Events also leave the store-wide stream (their numbers stay as gaps: `seq` only grows).
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

local function forget_events(id)
  local stream = K.part(id, 'events')
  local from = '-'
  while true do
    local entries = redis.call('XRANGE', stream, from, '+', 'COUNT', BATCH)
    if #entries == 0 then break end
    local ids = {}
    for i, entry in ipairs(entries) do ids[i] = entry[1] end
    redis.call('XDEL', K.g('events'), unpack(ids))
    from = '(' .. ids[#ids]
  end
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
  local task_sets = {}
  for step = 0, tonumber(f[4] or 0) + 1 do task_sets[#task_sets + 1] = K.part(id, 'tasks') .. ':' .. step end
  forget_records(K.part(id, 'tasks'), 'task-runs', {})
  forget_records(K.part(id, 'interrupts'), 'interrupt-runs', { 'interrupts', 'interrupts:pending' })
  forget_records(K.part(id, 'commands'), 'command-runs', { 'commands', 'commands:pending' })
  forget_events(id)
  forget_artifacts(id)
  redis.call('ZREM', K.g('runs'), id)
  redis.call('ZREM', K.g('runs:status:' .. f[1]), id)
  redis.call('ZREM', K.g('runs:workflow:' .. f[2]), id)
  if f[3] then redis.call('ZREM', K.g('runs:children:{' .. f[3] .. '}'), id) else redis.call('ZREM', K.g('runs:top'), id) end
  redis.call('ZREM', K.g('live'), id)
  redis.call('ZREM', K.g('timers'), id)
  in_batches(task_sets, function(batch) redis.call('DEL', unpack(batch)) end)
  redis.call('DEL', rk, K.g('runs:children:{' .. id .. '}'))
  for _, part in ipairs({ 'checkpoints', 'tasks', 'answers', 'interrupts', 'pending', 'commands', 'events', 'artifacts', 'waiters' }) do
    redis.call('DEL', K.part(id, part))
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
