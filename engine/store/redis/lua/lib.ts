import { LUA_KEYS } from "../keys.js";

/**
 * What every script shares: reading its arguments (see `ScriptArgs`), the server clock, the run
 * indexes, dispatch bookkeeping (`schedule`) and event numbering. Scripts run atomically, so each
 * of these helpers sees and leaves the store consistent.
 *
 * Dispatch, in Redis terms:
 * - a runnable run has one *offer*: an entry in the stream `offers:<version>`, read through the
 *   consumer group `workers` by the claim script (offer ids come from one counter, so the oldest
 *   offer across versions goes first);
 * - a claimed run has one *lease entry*: an entry in `leases:<leaseMs>`, pending for its owner in
 *   the group `owners`. Renewing the lease re-claims the entry (its idle time restarts), so an
 *   entry idle for `leaseMs` belongs to an owner that stopped renewing: XAUTOCLAIM finds it, and
 *   moves it to exactly one new owner (its delivery count grows with every takeover);
 * - a queued run that waits for a time sits in the sorted set `timers` until a claim finds it due;
 *   one that waits for a child run sits in that child's `waiters` set until the child ends.
 */
export const LUA_LIB = `${LUA_KEYS}
local RETENTION = tonumber(ARGV[2])
local OFFER_GROUP = 'workers'
local LEASE_GROUP = 'owners'
local TERMINAL = { succeeded = true, failed = true, canceled = true }

local argi = 2
local function arg() argi = argi + 1; return ARGV[argi] end
local function arg_num() return tonumber(arg()) end
-- a list of strings; nil when the count is -1 (absent, as opposed to empty)
local function arg_strings()
  local n = arg_num()
  if n < 0 then return nil end
  local items = {}
  for i = 1, n do items[i] = arg() end
  return items
end
-- a list of tuples of the given width
local function arg_tuples(width)
  local n = arg_num()
  local items = {}
  for i = 1, n do
    local item = {}
    for j = 1, width do item[j] = arg() end
    items[i] = item
  end
  return items
end
-- an optional value: present (possibly null) or absent
local function arg_optional()
  local tag = arg()
  if tag == 'v' then return true, arg() end
  return tag == 'n', nil
end

local function fmt(n) return string.format('%d', n) end
local TIME = redis.call('TIME')
local NOW = tonumber(TIME[1]) * 1000 + math.floor(tonumber(TIME[2]) / 1000)
-- The server clock in microseconds: the floor of fencing tokens.
local NOW_US = tonumber(TIME[1]) * 1000000 + tonumber(TIME[2])

-- Fences never fall below the clock (in microseconds): a server that lost its last writes in a
-- crash does not hand out again a fence that a live worker still holds.
local function next_fence()
  local fence = redis.call('INCR', K.g('fence'))
  if fence < NOW_US then
    fence = NOW_US
    redis.call('SET', K.g('fence'), fmt(fence))
  end
  return fence
end

local function hset_pairs(key, pairs)
  if #pairs == 0 then return end
  local flat = {}
  for _, p in ipairs(pairs) do flat[#flat + 1] = p[1]; flat[#flat + 1] = p[2] end
  redis.call('HSET', key, unpack(flat))
end

local function index_run(id, old_status)
  local f = redis.call('HMGET', K.run(id), 'status', 'updatedAt', 'workflow', 'parentRunId', 'deadlineAt')
  local status, at = f[1], f[2]
  redis.call('ZADD', K.g('runs'), at, id)
  if old_status and old_status ~= status then redis.call('ZREM', K.g('runs:status:' .. old_status), id) end
  redis.call('ZADD', K.g('runs:status:' .. status), at, id)
  redis.call('ZADD', K.g('runs:workflow:' .. f[3]), at, id)
  -- A run's deadline applies until it ends (lua/deadlines.ts builds the set in an older store).
  if f[5] and not TERMINAL[status] then
    redis.call('ZADD', K.g('deadlines:runs'), f[5], id)
  elseif f[5] then
    redis.call('ZREM', K.g('deadlines:runs'), id)
  end
  -- A running run is added at each write, not only when it starts: one a pitwall without this
  -- set claimed (before it was built, see running_of in claim.ts) is counted from its next write.
  if status == 'running' then
    redis.call('SADD', K.g('runs:running:' .. f[3]), id)
  elseif old_status == 'running' then
    redis.call('SREM', K.g('runs:running:' .. f[3]), id)
  end
  if f[4] then
    redis.call('ZADD', K.g('runs:children:{' .. f[4] .. '}'), at, id)
  else
    redis.call('ZADD', K.g('runs:top'), at, id)
  end
end

local function trim_events()
  if RETENTION <= 0 then return end
  local floor = tonumber(redis.call('GET', K.g('seq'))) - RETENTION + 1
  local oldest = redis.call('ZRANGE', K.g('live'), 0, 0, 'WITHSCORES')
  if oldest[2] and tonumber(oldest[2]) < floor then floor = tonumber(oldest[2]) end
  if floor > 1 then redis.call('XTRIM', K.g('events'), 'MINID', '~', fmt(floor) .. '-0') end
end

-- numbers and stores a run's events; returns seq, runSeq pairs
local function append_events(id, events)
  local rk = K.run(id)
  local out = {}
  for _, json in ipairs(events) do
    local seq = redis.call('INCR', K.g('seq'))
    local run_seq = redis.call('HINCRBY', rk, 'eventCount', 1)
    local entry = fmt(seq) .. '-0'
    redis.call('XADD', K.g('events'), entry, 'r', run_seq, 'e', json)
    redis.call('XADD', K.part(id, 'events'), entry, 'r', run_seq, 'e', json)
    redis.call('HINCRBY', rk, '_evBytes', #json)
    out[#out + 1] = seq
    out[#out + 1] = run_seq
  end
  if #events > 0 then trim_events() end
  return out
end

local function new_lease(id, owner, lease_ms)
  local stream = K.g('leases:' .. fmt(lease_ms))
  if redis.call('EXISTS', stream) == 0 then
    redis.call('XGROUP', 'CREATE', stream, LEASE_GROUP, '$', 'MKSTREAM')
    redis.call('SADD', K.g('lease-streams'), fmt(lease_ms))
  end
  local entry = redis.call('XADD', stream, '*', 'run', id)
  -- every lease entry is delivered as soon as it is added, so this delivers exactly this one
  redis.call('XREADGROUP', 'GROUP', LEASE_GROUP, owner, 'COUNT', 1, 'STREAMS', stream, '>')
  redis.call('HSET', K.run(id), '_lease', entry)
  return entry
end

local function drop_lease(id, entry, lease_ms)
  local stream = K.g('leases:' .. lease_ms)
  redis.call('XACK', stream, LEASE_GROUP, entry)
  redis.call('XDEL', stream, entry)
  redis.call('HDEL', K.run(id), '_lease')
end

-- Consumers come and go with worker processes; one that holds no entry can be forgotten (a
-- consumer is created again by its next read or claim).
local function prune_consumers(stream, group)
  for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
    local info = {}
    for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
    if info['pending'] == 0 then redis.call('XGROUP', 'DELCONSUMER', stream, group, info['name']) end
  end
end

local function offer(id, version)
  local stream = K.g('offers:' .. version)
  if redis.call('EXISTS', stream) == 0 then
    redis.call('XGROUP', 'CREATE', stream, OFFER_GROUP, '$', 'MKSTREAM')
    redis.call('SADD', K.g('offer-versions'), version)
  end
  local entry = fmt(redis.call('INCR', K.g('offer-seq'))) .. '-0'
  redis.call('XADD', stream, entry, 'run', id)
  redis.call('HSET', K.run(id), '_offer', entry)
end

local function withdraw_offer(id, version, entry)
  redis.call('XDEL', K.g('offers:' .. version), entry)
  redis.call('HDEL', K.run(id), '_offer')
end

-- Workers talk to the store all the time (claims while idle, every second by default; renewals
-- and commits while busy): when none has for longer than a lease, and a second (the server
-- restarted, or every worker was cut off from it), the leases that ran out meanwhile belong to
-- workers that were cut off too, not dead.
-- Commands queued in a client during the silence then arrive together, a claim among them: so
-- for one lease from the first call after the silence no claim takes a run over, which gives
-- their owners the time to renew. Called by claims, renewals and commits.
local function saw_fleet(lease_ms)
  local seen = tonumber(redis.call('GET', K.g('fleet-seen')))
  if seen and lease_ms and NOW - seen > math.max(lease_ms, 1000) then redis.call('SET', K.g('takeovers-held'), NOW + lease_ms) end
  redis.call('SET', K.g('fleet-seen'), NOW)
end

local function takeovers_held()
  local until_ms = tonumber(redis.call('GET', K.g('takeovers-held')))
  return until_ms ~= nil and NOW < until_ms
end

local function child_ended(child)
  local status = redis.call('HGET', K.run(child), 'status')
  return status == false or TERMINAL[status] == true
end

-- Makes a run's dispatch bookkeeping match its status: offered when it can run now, on the timer
-- set when it waits for a time, among its child's waiters when it waits for a child, holding a
-- lease entry only while running, in the live set (whose events retention keeps) until it ends.
local schedule
local function wake_waiters(id)
  local key = K.part(id, 'waiters')
  local waiters = redis.call('SMEMBERS', key)
  redis.call('DEL', key)
  for _, waiter in ipairs(waiters) do
    local f = redis.call('HMGET', K.run(waiter), 'status', 'waitingOn')
    if f[1] == 'queued' and f[2] == id then schedule(waiter) end
  end
end

schedule = function(id)
  local rk = K.run(id)
  local f = redis.call('HMGET', rk, 'status', 'wakeAt', 'waitingOn', '_offer', '_lease', '_leaseMs', 'version', '_firstSeq')
  local status, wake_at, waiting, offered, lease = f[1], tonumber(f[2]), f[3], f[4], f[5]
  if not status then
    redis.call('ZREM', K.g('timers'), id)
    return
  end
  if status ~= 'running' and lease then drop_lease(id, lease, f[6]) end
  if TERMINAL[status] then
    redis.call('ZREM', K.g('live'), id)
    wake_waiters(id)
  else
    redis.call('ZADD', K.g('live'), 'NX', f[8], id)
  end
  local due = false
  if status == 'queued' and wake_at and wake_at > NOW then
    redis.call('ZADD', K.g('timers'), fmt(wake_at), id)
  else
    redis.call('ZREM', K.g('timers'), id)
    if status == 'queued' then
      if waiting and not child_ended(waiting) then
        redis.call('SADD', K.part(waiting, 'waiters'), id)
      else
        due = true
      end
    end
  end
  if due and not offered then
    offer(id, f[7])
  elseif offered and not due then
    withdraw_offer(id, f[7], offered)
  end
end
`;
