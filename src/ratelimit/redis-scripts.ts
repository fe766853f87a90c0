import { createHash } from 'node:crypto';

/**
 * Lua scripts of the Redis counter store (redis-counter-store.ts). Each runs atomically in
 * Redis, so "check every rule, then commit on all of them" holds across replicas in one round
 * trip.
 *
 * Keys, one per rule: a hash for a windowed rule (`rs rc rp` = requests window start, current,
 * previous; `ts tc tp` = the same for tokens) and a sorted set for a concurrency rule (lease id
 * -> expiry in epoch ms). Window arithmetic mirrors sliding-window.ts exactly: epoch-aligned
 * starts in whole seconds, never moving back to an earlier window, and
 * floor(previous × unelapsed / period) + current, in the same double arithmetic as JavaScript.
 *
 * Every script that reads counters returns 7 integers per rule, in the order of KEYS:
 * rs, rc, rp, ts, tc, tp, in_flight. The store rebuilds the counters from them and computes
 * Retry-After and headers with the same TypeScript as the memory store (rule-check.ts).
 */

/** Helpers shared by the scripts; `now` (epoch seconds) is set by each script first. */
const prelude = `
local now = 0
local function num(value) return string.format('%.0f', value) end
local function advance(start, current, previous, period)
  local aligned = now - (now % period)
  if aligned <= start then return start, current, previous end
  if start >= 0 and aligned - start == period then return aligned, 0, current end
  return aligned, 0, 0
end
local function estimate(start, current, previous, period)
  local elapsed = math.min(math.max(now - start, 0), period)
  return math.floor(previous * (period - elapsed) / period) + current
end
local function load(key, period)
  local v = redis.call('HMGET', key, 'rs', 'rc', 'rp', 'ts', 'tc', 'tp')
  local rs, rc, rp = advance(tonumber(v[1]) or -1, tonumber(v[2]) or 0, tonumber(v[3]) or 0, period)
  local ts, tc, tp = advance(tonumber(v[4]) or -1, tonumber(v[5]) or 0, tonumber(v[6]) or 0, period)
  return {rs, rc, rp, ts, tc, tp, 0}
end
local function store(key, s, period)
  redis.call('HSET', key, 'rs', num(s[1]), 'rc', num(s[2]), 'rp', num(s[3]), 'ts', num(s[4]), 'tc', num(s[5]), 'tp', num(s[6]))
  -- Two periods after the last write the state reads as zero anyway; the margin covers skew.
  redis.call('PEXPIRE', key, num(period * 2000 + 60000))
end
local function keep_slots(key, ttl)
  if redis.call('PTTL', key) < ttl * 2 then redis.call('PEXPIRE', key, num(ttl * 2)) end
end
local function flatten(first, states)
  local reply = first
  for i = 1, #states do
    for j = 1, 7 do reply[#reply + 1] = states[i][j] end
  end
  return reply
end
`;

/**
 * ARGV: now_ms, hold (0|1), enforce_tokens (0|1), lease id, lease ttl ms, then per rule:
 * period, max_requests, max_tokens (-1 = none). Returns admitted (0|1) then the states: after
 * the commit when admitted, as checked when not (nothing is written then).
 */
const admit = `${prelude}
local now_ms = tonumber(ARGV[1])
now = math.floor(now_ms / 1000)
local hold = ARGV[2] == '1'
local enforce_tokens = ARGV[3] == '1'
local lease = ARGV[4]
local ttl = tonumber(ARGV[5])
local states = {}
local admitted = 1
for i, key in ipairs(KEYS) do
  local base = 5 + (i - 1) * 3
  local period = tonumber(ARGV[base + 1])
  local max_requests = tonumber(ARGV[base + 2])
  local max_tokens = tonumber(ARGV[base + 3])
  local s
  if period == 0 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', num(now_ms))
    s = {-1, 0, 0, -1, 0, 0, redis.call('ZCARD', key)}
    if hold and max_requests >= 0 and s[7] >= max_requests then admitted = 0 end
  else
    s = load(key, period)
    if max_requests >= 0 and estimate(s[1], s[2], s[3], period) >= max_requests then admitted = 0 end
    if enforce_tokens and max_tokens >= 0 and estimate(s[4], s[5], s[6], period) >= max_tokens then admitted = 0 end
  end
  states[i] = s
end
if admitted == 1 then
  for i, key in ipairs(KEYS) do
    local base = 5 + (i - 1) * 3
    local period = tonumber(ARGV[base + 1])
    local s = states[i]
    if period == 0 then
      if hold then
        redis.call('ZADD', key, num(now_ms + ttl), lease)
        keep_slots(key, ttl)
        s[7] = s[7] + 1
      end
    elseif tonumber(ARGV[base + 2]) >= 0 then
      s[2] = s[2] + 1
      store(key, s, period)
    end
  end
end
return flatten({admitted}, states)
`;

/** ARGV: now_ms, then per rule its period. Returns the states; writes nothing. */
const read = `${prelude}
local now_ms = tonumber(ARGV[1])
now = math.floor(now_ms / 1000)
local states = {}
for i, key in ipairs(KEYS) do
  local period = tonumber(ARGV[1 + i])
  if period == 0 then
    states[i] = {-1, 0, 0, -1, 0, 0, redis.call('ZCOUNT', key, '(' .. num(now_ms), '+inf')}
  else
    states[i] = load(key, period)
  end
end
return flatten({}, states)
`;

/** KEYS: windowed rules. ARGV: now_ms, tokens, then per rule its period. */
const addTokens = `${prelude}
now = math.floor(tonumber(ARGV[1]) / 1000)
local tokens = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  local period = tonumber(ARGV[2 + i])
  local s = load(key, period)
  s[5] = s[5] + tokens
  store(key, s, period)
end
return 1
`;

/**
 * ARGV: now_ms, lease id ('' = none), then per rule: period, counts_requests (0|1). Takes the
 * lease out of each concurrency rule and one request out of each current requests window.
 */
const refund = `${prelude}
now = math.floor(tonumber(ARGV[1]) / 1000)
local lease = ARGV[2]
for i, key in ipairs(KEYS) do
  local period = tonumber(ARGV[1 + 2 * i])
  if period == 0 then
    if lease ~= '' then redis.call('ZREM', key, lease) else redis.call('ZPOPMIN', key) end
  elseif ARGV[2 + 2 * i] == '1' then
    local v = redis.call('HMGET', key, 'rs', 'rc')
    if tonumber(v[1]) == now - (now % period) and (tonumber(v[2]) or 0) > 0 then redis.call('HINCRBY', key, 'rc', -1) end
  end
end
return 1
`;

/** KEYS: concurrency rules. ARGV: lease id ('' = none: the lease expiring first goes). */
const release = `
for _, key in ipairs(KEYS) do
  if ARGV[1] ~= '' then redis.call('ZREM', key, ARGV[1]) else redis.call('ZPOPMIN', key) end
end
return 1
`;

/**
 * KEYS: concurrency rules. ARGV: expiry ms, ttl ms, then per key the lease id to extend. Plain
 * ZADD (not XX): a lease lost with a Redis restart comes back while its request lives.
 */
const renew = `${prelude}
local ttl = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[1], ARGV[2 + i])
  keep_slots(key, ttl)
end
return 1
`;

export interface CounterScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

const script = (name: string, source: string): CounterScript => ({
  name,
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

export const counterScripts = {
  admit: script('admit', admit),
  read: script('read', read),
  addTokens: script('addTokens', addTokens),
  refund: script('refund', refund),
  release: script('release', release),
  renew: script('renew', renew),
} as const;
