/**
 * Builds the deadline indexes of a store written by a release without them, once (the marker
 * `deadlines-indexed` says they are built; every write keeps them from then on): `deadlines:runs`,
 * the runs not ended that have a deadline, and `deadlines:interrupts`, the pending interrupts that
 * have one, each scored by its deadline. No arguments. Replies: {'ok'}
 */
export const INDEX_DEADLINES = `
if redis.call('SET', K.g('deadlines-indexed'), '1', 'NX') then
  for _, status in ipairs({ 'queued', 'running', 'paused' }) do
    for _, id in ipairs(redis.call('ZRANGE', K.g('runs:status:' .. status), 0, -1)) do
      local at = redis.call('HGET', K.run(id), 'deadlineAt')
      if at then redis.call('ZADD', K.g('deadlines:runs'), at, id) end
    end
  end
  for _, iid in ipairs(redis.call('ZRANGE', K.g('interrupts:pending'), 0, -1)) do
    local owner = redis.call('HGET', K.g('interrupt-runs'), iid)
    local json = owner and redis.call('HGET', K.part(owner, 'interrupts'), iid)
    local deadline = json and cjson.decode(json).deadline
    if type(deadline) == 'table' and type(deadline.at) == 'number' then
      redis.call('ZADD', K.g('deadlines:interrupts'), fmt(deadline.at), iid)
    end
  end
end
return {'ok'}
`;
