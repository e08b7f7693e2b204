/**
 * The Lua scripts of the Redis state: each decision that two instances could race on (the last allowed
 * request, the last `times` of a rule, a seeded draw) is one script, which Redis runs atomically.
 * ioredis sends them with EVALSHA (EVAL once on NOSCRIPT). Keys are built from the prefix in ARGV[1],
 * so the scripts suit one Redis server (or a replica set), not Redis Cluster.
 */

// One fixed window (hash `s` start, `u` used): a new one once the old has run its length.
const WINDOW = `
local function win(k, now, len)
  local v = redis.call('HMGET', k, 's', 'u')
  local s, u = v[1], tonumber(v[2])
  if not s or now - tonumber(s) >= len then
    s = ARGV[2]; u = 0
    redis.call('HSET', k, 's', s, 'u', 0)
    redis.call('PEXPIRE', k, len + 60000)
  end
  return s, u
end
`;

/** KEYS: request window, token window. ARGV: prefix, now, limit, windowMs, tpm (-1: none), token windowMs. */
export const ADMIT = `${WINDOW}
local now, limit, wlen, tpm, tlen = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local rs, ru = win(KEYS[1], now, wlen)
local ts, tu = '-1', 0
if tpm >= 0 then ts, tu = win(KEYS[2], now, tlen) end
local refused = 0
if ru >= limit then refused = 1 elseif tpm >= 0 and tu >= tpm then refused = 2 end
if refused == 0 then ru = redis.call('HINCRBY', KEYS[1], 'u', 1) end
return {rs, ru, ts, tu, refused}
`;

/** KEYS: token window. ARGV: prefix, now, tokens, token windowMs. */
export const CHARGE = `${WINDOW}
local s = win(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[4]))
local u = redis.call('HINCRBY', KEYS[1], 'u', math.max(0, math.floor(tonumber(ARGV[3]))))
return {s, u}
`;

// mulberry32 (src/lib/prng.ts) in Lua 5.1 with the bit library: the same sequence for the same seed.
const MULBERRY = `
local function imul(a, b)
  local ah, al = bit.rshift(a, 16), bit.band(a, 0xffff)
  local bh, bl = bit.rshift(b, 16), bit.band(b, 0xffff)
  return bit.tobit(al * bl + bit.lshift((ah * bl + al * bh) % 65536, 16))
end
local function u32(x) if x < 0 then return x + 4294967296 end return x end
local function draw(state)
  local a = bit.tobit(state + 0x6d2b79f5)
  local t = imul(bit.bxor(a, bit.rshift(a, 15)), bit.bor(a, 1))
  t = bit.bxor(t, t + imul(bit.bxor(t, bit.rshift(t, 7)), bit.bor(t, 61)))
  return u32(a), u32(bit.bxor(t, bit.rshift(t, 14))) / 4294967296
end
`;

/** ARGV: prefix, count. Returns `count` draws of the seeded generator from state ARGV[3] (for tests). */
export const DRAWS = `${MULBERRY}
local a, out = tonumber(ARGV[3]), {}
for i = 1, tonumber(ARGV[2]) do
  local r
  a, r = draw(a)
  out[i] = string.format('%.17g', r)
end
return out
`;

// Adds one rule (ARGV from \`base\`: id or '', json, times or '', probability or '', seed); 'dup', 'full' or the id.
const ADD_ONE = `
local function add(P, max, id, json, times, p, seed)
  if id ~= '' and redis.call('EXISTS', P .. 'rule:' .. id) == 1 then return 'dup' end
  if redis.call('ZCARD', P .. 'rules') >= max then return 'full' end
  if id == '' then
    repeat id = 'rule-' .. redis.call('INCR', P .. 'rules:issued') until redis.call('EXISTS', P .. 'rule:' .. id) == 0
  end
  redis.call('ZADD', P .. 'rules', redis.call('INCR', P .. 'rules:seq'), id)
  redis.call('HSET', P .. 'rule:' .. id, 'json', json, 'times', times, 'p', p, 'seed', seed, 'rng', seed, 'matched', 0, 'fired', 0)
  redis.call('INCR', P .. 'rules:version')
  return id
end
`;

/** ARGV: prefix, max rules, id or '', json, times, probability, seed. */
export const ADD_RULE = `${ADD_ONE}
return add(ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
`;

/** The configured rules, written once by the first instance on an empty state. ARGV: prefix, max, then 5 per rule. */
export const SEED_RULES = `${ADD_ONE}
if redis.call('SETNX', ARGV[1] .. 'rules:seeded', 1) == 0 then return 0 end
for i = 3, #ARGV, 5 do add(ARGV[1], tonumber(ARGV[2]), ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]) end
return 1
`;

/** ARGV: prefix. Returns the version, then id, json, matched, fired of each rule in order. */
export const LIST_RULES = `
local P = ARGV[1]
local out = {redis.call('GET', P .. 'rules:version') or '0'}
for _, id in ipairs(redis.call('ZRANGE', P .. 'rules', 0, -1)) do
  local h = redis.call('HMGET', P .. 'rule:' .. id, 'json', 'matched', 'fired')
  if h[1] then
    out[#out + 1] = id; out[#out + 1] = h[1]; out[#out + 1] = h[2]; out[#out + 1] = h[3]
  end
end
return out
`;

/** ARGV: prefix, id. 1 when removed. */
export const DELETE_RULE = `
local P = ARGV[1]
if redis.call('ZREM', P .. 'rules', ARGV[2]) == 0 then return 0 end
redis.call('DEL', P .. 'rule:' .. ARGV[2])
redis.call('INCR', P .. 'rules:version')
return 1
`;

/** ARGV: prefix. How many rules there were. */
export const CLEAR_RULES = `
local P = ARGV[1]
local ids = redis.call('ZRANGE', P .. 'rules', 0, -1)
for _, id in ipairs(ids) do redis.call('DEL', P .. 'rule:' .. id) end
redis.call('DEL', P .. 'rules')
redis.call('INCR', P .. 'rules:version')
return #ids
`;

/** ARGV: prefix. Counters to zero, generators to their seed. */
export const RESET_RULES = `
local P = ARGV[1]
for _, id in ipairs(redis.call('ZRANGE', P .. 'rules', 0, -1)) do
  local k = P .. 'rule:' .. id
  redis.call('HSET', k, 'matched', 0, 'fired', 0, 'rng', redis.call('HGET', k, 'seed') or '1')
end
return 1
`;

/**
 * ARGV: prefix, the rules version the caller matched against, then the ids of the rules that match the
 * request, in order. {'stale', version} when the rules changed since; {'fired', id} or {'none'}.
 */
export const CLAIM = `${MULBERRY}
local P = ARGV[1]
local v = redis.call('GET', P .. 'rules:version') or '0'
if v ~= ARGV[2] then return {'stale', v} end
for i = 3, #ARGV do
  local k = P .. 'rule:' .. ARGV[i]
  local h = redis.call('HMGET', k, 'times', 'fired', 'p', 'rng')
  local times, fired = tonumber(h[1]), tonumber(h[2])
  if fired and not (times and fired >= times) then
    redis.call('HINCRBY', k, 'matched', 1)
    local p, wins = tonumber(h[3]), true
    if p then
      local a, r = draw(tonumber(h[4]))
      redis.call('HSET', k, 'rng', string.format('%.0f', a))
      wins = r < p
    end
    if wins then
      redis.call('HINCRBY', k, 'fired', 1)
      return {'fired', ARGV[i]}
    end
  end
end
return {'none'}
`;

/** ARGV: prefix, capacity, entry JSON. Appends to the capped stream and counts it, in one round trip. */
export const APPEND_JOURNAL = `
redis.call('XADD', ARGV[1] .. 'journal', 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[3])
return redis.call('INCR', ARGV[1] .. 'journal:total')
`;

/** ARGV: prefix, capacity. How many entries the journal held (at most its capacity). */
export const CLEAR_JOURNAL = `
local n = redis.call('XLEN', ARGV[1] .. 'journal')
redis.call('DEL', ARGV[1] .. 'journal', ARGV[1] .. 'journal:total')
return math.min(n, tonumber(ARGV[2]))
`;

/** ARGV: prefix, id. {body, polls} after counting this poll, or nil. */
export const POLL_VIDEO = `
local k = ARGV[1] .. 'video:' .. ARGV[2]
if redis.call('EXISTS', k) == 0 then return false end
local n = redis.call('HINCRBY', k, 'polls', 1)
return {redis.call('HGET', k, 'body'), n, redis.call('HGET', k, 'timing')}
`;
