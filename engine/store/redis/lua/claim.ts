import { LUA_SHA256 } from "./sha256.js";

/**
 * Claims one run (`Store.claimRun`, the rules of `claimable` and `pickClaim` in
 * `engine/store/rules.ts`): first a run whose owner stopped renewing (XAUTOCLAIM on the lease
 * streams, one at a time), then a fresh offer among the versions the worker can run: the
 * workflows take turns (the first by name after the one the store's last claim of a queued run
 * took, kept in `claim-turn`), and within one the oldest offer goes first. Due timers are offered
 * first. Arguments: owner, leaseMs, request id (a request sent again, or asked again by a claim
 * after one that failed, gets the run it claimed while its owner holds it), run id
 * ('' for any), versions (list, or absent for every version), runs not to take over (list),
 * take-overs allowed ('1' or '0'), limits (tuples of workflow name and how many of its runs may
 * be running at once: a workflow with that many running has its offers left where they are).
 *
 * Replies: {'claimed', fence, recovered (0/1), run hash as a flat list, previous owner or false, the server's
 * clock (ms)} | {'none'}
 */
export const CLAIM = `${LUA_SHA256}
local owner = arg()
local lease_ms = arg_num()
local request = arg()
local only = arg()
local versions = arg_strings()
local allowed = nil
if versions then
  allowed = {}
  for _, v in ipairs(versions) do allowed[v] = true end
end
local excluded = {}
for _, id in ipairs(arg_strings()) do excluded[id] = true end
local take_overs = arg() == '1'
local limits = {}
for _, l in ipairs(arg_tuples(2)) do limits[l[1]] = tonumber(l[2]) end

-- Running runs of a limited workflow: the set runs:running:<name>, which index_run (lib.ts) keeps,
-- so that a count reads the workflow's own running runs, never those of every workflow. A store
-- written by a pitwall without these sets gets them from its index of running runs, once, by the
-- first claim that counts (runs:running-indexed marks them built). A count that reaches the limit
-- checks the members it counts against their runs and drops any that no longer runs there, so
-- that no member left behind (a pitwall without the sets ended its run) holds the workflow back.
local counted = {}
local function running_of(name, limit)
  if counted[name] then return counted[name] end
  if redis.call('SET', K.g('runs:running-indexed'), '1', 'NX') then
    for _, id in ipairs(redis.call('ZRANGE', K.g('runs:status:running'), 0, -1)) do
      local workflow = redis.call('HGET', K.run(id), 'workflow')
      if workflow then redis.call('SADD', K.g('runs:running:' .. workflow), id) end
    end
  end
  local key = K.g('runs:running:' .. name)
  local n = redis.call('SCARD', key)
  if n >= limit then
    n = 0
    for _, id in ipairs(redis.call('SMEMBERS', key)) do
      local r = redis.call('HMGET', K.run(id), 'status', 'workflow')
      if r[1] == 'running' and r[2] == name then n = n + 1 else redis.call('SREM', key, id) end
      if n >= limit then break end
    end
  end
  counted[name] = n
  return n
end
local function at_limit(name)
  local limit = limits[name]
  return limit ~= nil and running_of(name, limit) >= limit
end

local function reply(id, fence, recovered, previous)
  return {'claimed', fence, recovered and 1 or 0, redis.call('HGETALL', K.run(id)), previous or false, NOW}
end

local earlier = redis.call('GET', K.g('claim-req:' .. request))
if earlier then
  local f = redis.call('HMGET', K.run(earlier), 'owner', '_claimReq', 'fence', '_claimRecovered', '_claimFrom')
  if f[1] == owner and f[2] == request then return reply(earlier, tonumber(f[3]), f[4] == '1', f[5]) end
  return {'none'}
end

saw_fleet(lease_ms)
if takeovers_held() then take_overs = false end

local function claimable(id)
  if excluded[id] then return false end
  local f = redis.call('HMGET', K.run(id), 'status', 'version', 'leaseUntil', 'wakeAt', 'waitingOn', 'workflow')
  if not f[1] then return false end
  if allowed and not allowed[f[2]] then return false end
  if f[1] == 'running' then return take_overs and f[3] ~= false and tonumber(f[3]) < NOW end
  if f[1] ~= 'queued' then return false end
  if f[4] and tonumber(f[4]) > NOW then return false end
  if f[5] and not child_ended(f[5]) then return false end
  return not at_limit(f[6])
end

-- Written out by hand: numbers must stay exact (cjson keeps 14 digits, a fence has 16).
local function claimed_event(id, fence, recovered)
  return '{"runId":' .. cjson.encode(id) .. ',"taskId":null'
    .. ',"traceId":"' .. string.sub(sha256_hex('trace:' .. id), 1, 32) .. '"'
    .. ',"spanId":"' .. string.sub(sha256_hex('span:' .. id .. ':' .. fmt(fence)), 1, 16) .. '"'
    .. ',"type":"run.claimed","actor":' .. cjson.encode('worker:' .. owner)
    .. ',"payload":{"worker":' .. cjson.encode(owner) .. ',"fence":' .. fmt(fence) .. ',"recovered":' .. tostring(recovered) .. '}'
    .. ',"time":' .. fmt(NOW) .. '}'
end

-- lease_held: the run's lease entry was already moved to this owner by XAUTOCLAIM
local function take(id, lease_held)
  local rk = K.run(id)
  local f = redis.call('HMGET', rk, 'status', 'startedAt', '_offer', '_lease', '_leaseMs', 'version', 'owner')
  local recovered = f[1] == 'running'
  local fence = next_fence()
  if f[3] then withdraw_offer(id, f[6], f[3]) end
  local lease = f[4]
  if recovered and lease and tonumber(f[5]) == lease_ms then
    -- a takeover keeps the entry: its delivery count records the takeovers
    if not lease_held then redis.call('XCLAIM', K.g('leases:' .. f[5]), LEASE_GROUP, owner, 0, lease) end
  else
    if lease then drop_lease(id, lease, f[5]) end
    lease = new_lease(id, owner, lease_ms)
  end
  redis.call('HSET', rk, 'status', 'running', 'owner', owner, 'leaseUntil', NOW + lease_ms, '_leaseMs', lease_ms,
    'fence', fmt(fence), 'updatedAt', NOW, '_claimReq', request, '_claimRecovered', recovered and '1' or '0')
  redis.call('HDEL', rk, 'wakeAt')
  local previous = recovered and f[7] or false
  if previous then redis.call('HSET', rk, '_claimFrom', previous) else redis.call('HDEL', rk, '_claimFrom') end
  if not f[2] then redis.call('HSET', rk, 'startedAt', NOW) end
  if recovered then
    redis.call('HINCRBY', rk, 'recoveries', 1)
    redis.call('HINCRBY', rk, 'lostInARow', 1)
  end
  redis.call('SET', K.g('claim-req:' .. request), id, 'PX', 60000)
  index_run(id, f[1])
  schedule(id)
  append_events(id, { claimed_event(id, fence, recovered) })
  return reply(id, fence, recovered, previous)
end

-- An entry this owner cannot take (another version, or its lease was just renewed) goes back
-- to its owner as it was: same idle time, same delivery count.
local function hand_back(stream, entry, run)
  local pending = redis.call('XPENDING', stream, LEASE_GROUP, entry, entry, 1)[1]
  local deliveries = pending and pending[4] or 1
  local idle = 0
  if run[3] and run[4] then idle = math.max(0, NOW - (tonumber(run[3]) - tonumber(run[4]))) end
  redis.call('XCLAIM', stream, LEASE_GROUP, run[2] or owner, 0, entry, 'IDLE', idle, 'RETRYCOUNT', math.max(0, deliveries - 1), 'JUSTID')
end

local function take_over()
  for _, ms in ipairs(redis.call('SMEMBERS', K.g('lease-streams'))) do
    local stream = K.g('leases:' .. ms)
    local cursor_key = K.g('takeover-cursor:' .. ms)
    local cursor = redis.call('GET', cursor_key) or '0-0'
    for _ = 1, 8 do
      local found = redis.call('XAUTOCLAIM', stream, LEASE_GROUP, owner, ms, cursor, 'COUNT', 1)
      cursor = found[1]
      for _, entry in ipairs(found[2]) do
        local id = entry[2][2]
        local run = redis.call('HMGET', K.run(id), '_lease', 'owner', 'leaseUntil', '_leaseMs')
        if run[1] ~= entry[1] then
          redis.call('XACK', stream, LEASE_GROUP, entry[1])
          redis.call('XDEL', stream, entry[1])
        elseif claimable(id) then
          redis.call('SET', cursor_key, cursor)
          local claim = take(id, true)
          prune_consumers(stream, LEASE_GROUP)
          return claim
        else
          hand_back(stream, entry[1], run)
        end
      end
      if cursor == '0-0' then break end
    end
    redis.call('SET', cursor_key, cursor)
  end
  return nil
end

local names = {}
local function workflow_of(version)
  if names[version] == nil then
    local meta = redis.call('HGET', K.g('workflow-list'), version)
    names[version] = meta and cjson.decode(meta).name or version
  end
  return names[version]
end

-- the number of a stream's next undelivered offer (offer ids come from one counter), or nil
local function next_offer(stream)
  if redis.call('EXISTS', stream) == 0 then return nil end
  local delivered = '0-0'
  for _, group in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local info = {}
    for i = 1, #group, 2 do info[group[i]] = group[i + 1] end
    if info['name'] == OFFER_GROUP then delivered = info['last-delivered-id'] end
  end
  local nxt = redis.call('XRANGE', stream, '(' .. delivered, '+', 'COUNT', 1)[1]
  return nxt and tonumber(string.match(nxt[1], '^(%d+)'))
end

-- the stream to read (among the allowed versions) and its workflow: the workflows with an offer
-- take turns, and within the one whose turn it is, the version whose next offer is the oldest
local function fair_offer()
  local best = {}
  for _, version in ipairs(versions or redis.call('SMEMBERS', K.g('offer-versions'))) do
    local stream = K.g('offers:' .. version)
    local n = next_offer(stream)
    local name = n and workflow_of(version)
    if n and not at_limit(name) then
      if not best[name] or n < best[name].n then best[name] = { stream = stream, n = n } end
    end
  end
  local last = redis.call('GET', K.g('claim-turn'))
  local first, after
  for name in pairs(best) do
    if not first or name < first then first = name end
    if last and name > last and (not after or name < after) then after = name end
  end
  local turn = after or first
  if not turn then return nil end
  return best[turn].stream, turn
end

for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.g('timers'), '-inf', NOW, 'LIMIT', 0, 100)) do schedule(id) end

if only ~= '' then
  if claimable(only) then return take(only, false) end
  return {'none'}
end

if take_overs then
  local recovered = take_over()
  if recovered then return recovered end
end

for _ = 1, 100 do
  local stream, turn = fair_offer()
  if not stream then break end
  local delivered = redis.call('XREADGROUP', 'GROUP', OFFER_GROUP, owner, 'COUNT', 1, 'STREAMS', stream, '>')
  local entry = delivered[1][2][1]
  redis.call('XACK', stream, OFFER_GROUP, entry[1])
  redis.call('XDEL', stream, entry[1])
  prune_consumers(stream, OFFER_GROUP)
  local id = entry[2][2]
  if redis.call('HGET', K.run(id), '_offer') == entry[1] then
    redis.call('HDEL', K.run(id), '_offer')
    if claimable(id) then
      redis.call('SET', K.g('claim-turn'), turn)
      return take(id, false)
    end
    schedule(id)
  end
end
return {'none'}
`;

/**
 * Extends a lease (`Store.renewLease`) and restarts its entry's idle time.
 * Arguments: run id, owner, fence, leaseMs. Replies: {'ok'} | {'notfound', 'run', id} | {'stale', fence}
 */
export const RENEW = `
local id = arg()
local owner = arg()
local fence = arg_num()
local lease_ms = arg_num()
local rk = K.run(id)
saw_fleet(lease_ms)
local f = redis.call('HMGET', rk, 'id', 'fence', 'owner', '_lease', '_leaseMs')
if not f[1] then return {'notfound', 'run', id} end
if tonumber(f[2]) ~= fence or f[3] ~= owner then return {'stale', f[2]} end
redis.call('HSET', rk, 'leaseUntil', NOW + lease_ms)
if f[4] and tonumber(f[5]) == lease_ms then
  redis.call('XCLAIM', K.g('leases:' .. f[5]), LEASE_GROUP, owner, 0, f[4], 'JUSTID')
elseif f[4] then
  drop_lease(id, f[4], f[5])
  new_lease(id, owner, lease_ms)
  redis.call('HSET', rk, '_leaseMs', lease_ms)
end
return {'ok'}
`;
