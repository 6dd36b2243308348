package redisstore

import "github.com/redis/go-redis/v9"

// The Lua scripts. Each touches only keys of one hash tag (one approval, or
// one turn), so it runs in a single slot of a cluster; Redis runs a script
// atomically, which makes every transition happen exactly once however many
// clients race. The scripts return the record as HGETALL gives it, so a
// loser learns who won in the same round trip. A missing record returns
// false (nil in Go: ErrNotFound).
//
// Record hash fields: r immutable JSON, s state, e deadline (unix ms),
// b decided_by JSON, d decided_at, n reason, sa started_at, ea ended_at,
// x result JSON, m message ref.

// createScript: KEYS[1] record. ARGV: r, s, e, ttl ms. Returns 1, or 0 when
// the id is taken.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[1], 's', ARGV[2], 'e', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`)

// decideScript: KEYS[1] record. ARGV: to, decided_by, decided_at, reason,
// at ms, ttl ms. pending → to, except that an approval at or after the
// deadline records expired. Returns {won 0|1, HGETALL}.
var decideScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'pending' then return {0, redis.call('HGETALL', KEYS[1])} end
local to = ARGV[1]
if to == 'approved' and tonumber(ARGV[5]) >= tonumber(redis.call('HGET', KEYS[1], 'e')) then
  to = 'expired'
end
redis.call('HSET', KEYS[1], 's', to, 'b', ARGV[2], 'd', ARGV[3], 'n', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// claimScript: KEYS[1] record. ARGV: started_at, ttl ms. approved →
// running. Returns {ok 0|1, HGETALL}.
var claimScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'approved' then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 's', 'running', 'sa', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// finishScript: KEYS[1] record. ARGV: to, ended_at, result, ttl ms.
// running → to. Returns {ok 0|1, HGETALL}.
var finishScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'running' then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 's', ARGV[1], 'ea', ARGV[2], 'x', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// setRefScript: KEYS[1] record. ARGV: ref. Returns 1, or 0 when missing
// (a plain HSET would create a stray record).
var setRefScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'm', ARGV[1])
return 1
`)

// Turn keys: KEYS[1] hash {r: turn JSON, o: pending ids JSON in order,
// z: set once when the turn was resumed}, KEYS[2] set of pending ids.

// saveTurnScript: ARGV: r, o, ttl ms, pending ids…. Replaces the turn and
// starts a new suspension (z cleared).
var saveTurnScript = redis.NewScript(`
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'o', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if #ARGV > 3 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 4))
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
`)

// getTurnScript: returns {r, o, members} or false when missing.
var getTurnScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'r', 'o')
if not v[1] then return false end
return {v[1], v[2], redis.call('SMEMBERS', KEYS[2])}
`)

// resolveScript: ARGV: approval id. Returns -1 when the turn is missing,
// 1 to exactly one caller: the one whose SREM emptied the set, and only if
// the turn was not resumed before; 0 otherwise.
var resolveScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
if redis.call('SCARD', KEYS[2]) > 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'z', '1') == 0 then return 0 end
return 1
`)
