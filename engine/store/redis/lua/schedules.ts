/**
 * A schedule is the hash `schedule:<id>` — `config` (its record as an operator sets it, JSON),
 * `fired` (what firing writes: `ScheduleAdvance`, JSON), `nextAt` (its next time as text, '' for
 * none: what the compare-and-set compares) and `revision` — and its id is in the set `schedules`.
 * No script decodes JSON: a number in a schedule's input keeps every digit.
 */

/**
 * `Store.putSchedule`. Arguments: id, expected revision ('n': a new schedule), config json, fired
 * json, nextAt text. Replies: {'ok', revision} | {'exists'} | {'notfound'} | {'changed'}
 */
export const PUT_SCHEDULE = `
local id = arg()
local expected = arg()
local is_new = expected == 'n'
local expect = tonumber(expected)
local config = arg()
local fired = arg()
local next_at = arg()
local key = K.g('schedule:' .. id)
local revision = tonumber(redis.call('HGET', key, 'revision') or '0')
if is_new and revision > 0 then return {'exists'} end
if not is_new and revision == 0 then return {'notfound'} end
if not is_new and revision ~= expect then return {'changed'} end
redis.call('HSET', key, 'config', config, 'fired', fired, 'nextAt', next_at, 'revision', revision + 1)
redis.call('SADD', K.g('schedules'), id)
return {'ok', revision + 1}
`;

/**
 * `Store.advanceSchedule`: writes only while `nextAt` is still the one the caller read.
 * Arguments: id, expected nextAt text, fired json, nextAt text. Replies: {'ok'} | {'moved'}
 */
export const ADVANCE_SCHEDULE = `
local id = arg()
local expect = arg()
local fired = arg()
local next_at = arg()
local key = K.g('schedule:' .. id)
if redis.call('HGET', key, 'nextAt') ~= expect then return {'moved'} end
redis.call('HSET', key, 'fired', fired, 'nextAt', next_at)
redis.call('HINCRBY', key, 'revision', 1)
return {'ok'}
`;

/** `Store.deleteSchedule`. Arguments: id. Replies: {'ok', 1 if it was there, else 0} */
export const DELETE_SCHEDULE = `
local id = arg()
redis.call('SREM', K.g('schedules'), id)
return {'ok', redis.call('DEL', K.g('schedule:' .. id))}
`;
