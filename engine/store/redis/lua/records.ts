/**
 * Creates a run with its input checkpoint and first events (`Store.createRun`), answering the
 * command that makes it if one is given (only while that command is pending). Arguments: run id,
 * run fields, checkpoint (id, n, step, bytes, json), events, command answered (0 or 1 of command
 * id, status, answer json, event). A resent request (same input checkpoint) is acknowledged.
 * Replies: {'ok', {seq, runSeq...}} | {'duplicate'} | {'exists'} | {'notfound', 'command', id}
 * | {'answered', command id, answer json}
 */
export const CREATE_RUN = `
local id = arg()
local fields = arg_tuples(2)
local checkpoint = arg_tuples(5)[1]
local events = arg_strings()
local answering = arg_tuples(4)[1]
local rk = K.run(id)
if redis.call('EXISTS', rk) == 1 then
  -- A resent create is the same run: the same first checkpoint, workflow, version and creation time.
  local same = redis.call('LINDEX', K.part(id, 'checkpoints'), 0) == checkpoint[5]
  for _, pair in ipairs(fields) do
    if pair[1] == 'workflow' or pair[1] == 'version' or pair[1] == 'createdAt' then
      same = same and redis.call('HGET', rk, pair[1]) == pair[2]
    end
  end
  if same then return {'duplicate'} end
  return {'exists'}
end
local source
if answering then
  source = redis.call('HGET', K.g('command-runs'), answering[1])
  if not source then return {'notfound', 'command', answering[1]} end
  local earlier = redis.call('HGET', K.part(source, 'answers'), answering[1])
  if earlier then return {'answered', answering[1], earlier} end
end
hset_pairs(rk, fields)
redis.call('HSET', rk, 'head', checkpoint[1], 'headN', checkpoint[2], 'step', checkpoint[3], 'updatedAt', NOW,
  '_cpBytes', checkpoint[4], '_evBytes', 0, '_artBytes', 0, '_firstSeq', (tonumber(redis.call('GET', K.g('seq'))) or 0) + 1)
redis.call('RPUSH', K.part(id, 'checkpoints'), checkpoint[5])
local numbers = append_events(id, events)
index_run(id, nil)
schedule(id)
if answering then
  redis.call('HSET', K.part(source, 'answers'), answering[1], answering[3])
  if answering[2] ~= 'pending' then redis.call('ZREM', K.g('commands:pending'), answering[1]) end
  for _, n in ipairs(append_events(source, { answering[4] })) do numbers[#numbers + 1] = n end
end
return {'ok', numbers}
`;

/**
 * Stores an operator command with its `operator.requested` event (`Store.submitCommand`).
 * Arguments: command id, run id, createdAt, json, event. A resent request is acknowledged.
 * Replies: {'ok', {seq, runSeq}} | {'duplicate'} | {'notfound', 'run', id} | {'exists'}
 */
export const SUBMIT_COMMAND = `
local cid = arg()
local id = arg()
local created_at = arg()
local json = arg()
local event = arg()
if redis.call('EXISTS', K.run(id)) == 0 then return {'notfound', 'run', id} end
local owner = redis.call('HGET', K.g('command-runs'), cid)
if owner then
  if redis.call('HGET', K.part(owner, 'commands'), cid) == json then return {'duplicate'} end
  return {'exists'}
end
redis.call('HSET', K.part(id, 'commands'), cid, json)
redis.call('HSET', K.g('command-runs'), cid, id)
redis.call('ZADD', K.g('commands'), created_at, cid)
redis.call('ZADD', K.g('commands:pending'), created_at, cid)
return {'ok', append_events(id, { event })}
`;

/**
 * Answers a pending command with its `operator.*` event (`Store.answerCommand`). Arguments:
 * command id, status, answer json, event. A resent request is acknowledged.
 * Replies: {'ok', {seq, runSeq}} | {'duplicate'} | {'notfound', 'command', id} | {'answered', command id, answer json}
 */
export const ANSWER_COMMAND = `
local cid = arg()
local status = arg()
local json = arg()
local event = arg()
local owner = redis.call('HGET', K.g('command-runs'), cid)
if not owner then return {'notfound', 'command', cid} end
local earlier = redis.call('HGET', K.part(owner, 'answers'), cid)
if earlier == json then return {'duplicate'} end
if earlier then return {'answered', cid, earlier} end
redis.call('HSET', K.part(owner, 'answers'), cid, json)
if status ~= 'pending' then redis.call('ZREM', K.g('commands:pending'), cid) end
return {'ok', append_events(owner, { event })}
`;

/**
 * Stores an artifact once by content and counts it for the run (`Store.putArtifact`), and the
 * artifact's runs in its `refs` (DELETE_RUN deletes it with the last).
 * Arguments: run id, sha256, media type, size, data. Replies: {'ok'} | {'notfound', 'run', id}
 */
export const PUT_ARTIFACT = `
local id = arg()
local sha = arg()
local media_type = arg()
local size = arg_num()
local data = arg()
if redis.call('EXISTS', K.run(id)) == 0 then return {'notfound', 'run', id} end
redis.call('HSETNX', K.g('artifact:' .. sha), 'data', data)
redis.call('HSETNX', K.g('artifact:' .. sha), 'mediaType', media_type)
if redis.call('SADD', K.part(id, 'artifacts'), sha) == 1 then
  redis.call('HINCRBY', K.run(id), '_artBytes', size)
  redis.call('HINCRBY', K.g('artifact:' .. sha), 'refs', 1)
end
return {'ok'}
`;

/**
 * Records a worker's heartbeat (`Store.putWorker`): its record as JSON in the hash `workers`,
 * its time the server's (the client sends the record with `lastSeen` first, as 0), and in the
 * sorted set `workers-seen` by that time; records not seen for `keptMs` go. Only commands of
 * the README's ACL. Arguments: worker id, json, keptMs. Replies: {'ok', replaced json or false}
 */
export const PUT_WORKER = `
local id = arg()
local json = arg()
local kept_ms = arg_num()
local stamp = '{"lastSeen":0'
local seen = K.g('workers-seen')
local old = redis.call('HGET', K.g('workers'), id)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', NOW - kept_ms)) do
  redis.call('HDEL', K.g('workers'), gone)
  redis.call('ZREM', seen, gone)
end
redis.call('HSET', K.g('workers'), id, '{"lastSeen":' .. fmt(NOW) .. string.sub(json, #stamp + 1))
redis.call('ZADD', seen, NOW, id)
return {'ok', old or false}
`;
