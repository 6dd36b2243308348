package redisstore

import "github.com/redis/go-redis/v9"

// The Lua scripts. Each touches only keys of one hash tag (one shard of
// approvals, or one turn), so it runs in a single slot of a cluster; Redis
// runs a script atomically, which makes every transition happen exactly
// once however many clients race. The scripts return the record as HGETALL
// gives it, so a loser learns who won in the same round trip. A missing
// record returns false (nil in Go: ErrNotFound).
//
// The approval scripts take KEYS[1] the record, KEYS[2] its shard's
// pending index, KEYS[3] its shard's id index and KEYS[4] its shard's
// channel counts (see the package doc); a record kept by an earlier
// version outside the shards is run with KEYS[1] alone, and has no index
// entry.
//
// Record hash fields: r immutable JSON, s state, e deadline (unix ms),
// b decided_by JSON, d decided_at, n reason, sa started_at, ea ended_at,
// x result JSON, m message ref, p preview JSON (when it replaced the one
// in r), l last life (unix ms: the decision, the
// claim, the latest heartbeat or the finish), i its member in the shard's
// pending index while pending, j its member in the shard's id index and c
// its channel's field in the shard's channel counts while pending, z set once the decision was settled
// (carried through to its turn), g set while the outcome is recovery's
// guess (FinishAbandoned), which the run's own Finish replaces.
//
// l is written by the same script as the state it goes with, so a reader
// of the record sees the two together; recovery judges a record by its l
// (Unsettled, finishAbandonedScript), never by the cs:unsettled score read
// in an earlier round trip, which another replica may have moved since.

// createScript: KEYS[1] record, KEYS[2] pending index, KEYS[3] id index,
// KEYS[4] channel counts. ARGV: r, s, e, ttl ms, pending index member,
// id index member, channel ("platform:channel"). Returns 1, or 0 when the
// id is taken.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[1], 's', ARGV[2], 'e', ARGV[3], 'i', ARGV[5], 'j', ARGV[6], 'c', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], 0, ARGV[5])
redis.call('ZADD', KEYS[3], 0, ARGV[6])
redis.call('HINCRBY', KEYS[4], ARGV[7], 1)
return 1
`)

// unindexLua takes a record out of its shard's indexes (pending, id,
// channel count), once: the fields that name its entries go with them.
// A record of an earlier version outside the shards (no KEYS[2]) has
// none. Part of every script that moves a record out of pending.
const unindexLua = `
local function unindex()
  local f = redis.call('HMGET', KEYS[1], 'i', 'j', 'c')
  if KEYS[2] then
    if f[1] then redis.call('ZREM', KEYS[2], f[1]) end
    if f[2] then redis.call('ZREM', KEYS[3], f[2]) end
    if f[3] and redis.call('HINCRBY', KEYS[4], f[3], -1) <= 0 then redis.call('HDEL', KEYS[4], f[3]) end
  end
  redis.call('HDEL', KEYS[1], 'i', 'j', 'c')
end
`

// decideScript: KEYS[1] record, KEYS[2] pending index. ARGV: to,
// decided_by, decided_at, reason, at ms, ttl ms. pending → to, except that
// an approval at or after the deadline records expired; l = at; the entry
// leaves the pending index. Returns {won 0|1, HGETALL}.
var decideScript = redis.NewScript(unindexLua + `
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'pending' then return {0, redis.call('HGETALL', KEYS[1])} end
local to = ARGV[1]
if to == 'approved' and tonumber(ARGV[5]) >= tonumber(redis.call('HGET', KEYS[1], 'e')) then
  to = 'expired'
end
redis.call('HSET', KEYS[1], 's', to, 'b', ARGV[2], 'd', ARGV[3], 'n', ARGV[4], 'l', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
unindex()
return {1, redis.call('HGETALL', KEYS[1])}
`)

// dropScript: KEYS as createScript's. ARGV: pending index member. Undoes
// createScript (a Create that lost its tool call id, or failed after).
var dropScript = redis.NewScript(unindexLua + `
unindex()
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
`)

// healScript: KEYS as createScript's. ARGV: pending index member, id
// index member, channel. Drops the index entries of a record that is gone
// (its TTL ran out while nobody swept it) or no longer holds them; the
// channel's count goes down with the id entry, once. Returns 1 when it
// dropped the pending entry.
var healScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'i', 'j')
local n = 0
if f[1] ~= ARGV[1] then n = redis.call('ZREM', KEYS[2], ARGV[1]) end
if f[2] ~= ARGV[2] and redis.call('ZREM', KEYS[3], ARGV[2]) == 1 then
  if redis.call('HINCRBY', KEYS[4], ARGV[3], -1) <= 0 then redis.call('HDEL', KEYS[4], ARGV[3]) end
end
return n
`)

// settleScript: KEYS[1] record. Marks a final record settled (field z),
// so that Unsettled drops any cs:unsettled entry of it that a losing
// transition wrote after the settle: every transition marks before its
// script, so a Claim that loses to a replica that has already finished and
// settled the call writes an entry back. Returns 1 when the record is
// final (now settled), 0 when it is not, false when it is missing.
var settleScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s == 'done' or s == 'failed' or s == 'cancelled' or s == 'expired' then
  redis.call('HSET', KEYS[1], 'z', '1')
  return 1
end
return 0
`)

// claimScript: KEYS[1] record. ARGV: started_at, ttl ms, at ms. approved →
// running, l = at. Returns {ok 0|1, HGETALL}.
var claimScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'approved' then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 's', 'running', 'sa', ARGV[1], 'l', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// finishScript: KEYS[1] record. ARGV: to, ended_at, result, ttl ms, at ms.
// running → to, l = at; and failed → to when that failure was recovery's
// guess (field g, set by finishAbandonedScript): the run's own outcome,
// arriving late (its process could not reach Redis for a while), wins over
// the sweep's "interrupted", once. Returns {ok 0|1, HGETALL}.
var finishScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 's', 'g')
if not v[1] then return false end
if v[1] ~= 'running' and not (v[1] == 'failed' and v[2] == '1') then
  return {0, redis.call('HGETALL', KEYS[1])}
end
redis.call('HSET', KEYS[1], 's', ARGV[1], 'ea', ARGV[2], 'x', ARGV[3], 'l', ARGV[5])
redis.call('HDEL', KEYS[1], 'g')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// finishAbandonedScript: KEYS[1] record. ARGV: to, ended_at, result,
// ttl ms, at ms, cutoff ms. running → to, l = at, but only while l is at
// or before the cutoff (a record without l counts as abandoned): the
// check and the move are one step, so a claim or heartbeat that lands
// after a sweep read the record makes this refuse. It marks the outcome
// as a guess (g), which the run's own Finish may replace. Returns {ok 0|1,
// HGETALL}.
var finishAbandonedScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 's', 'l')
if not v[1] then return false end
if v[1] ~= 'running' or (v[2] and tonumber(v[2]) > tonumber(ARGV[6])) then
  return {0, redis.call('HGETALL', KEYS[1])}
end
redis.call('HSET', KEYS[1], 's', ARGV[1], 'ea', ARGV[2], 'x', ARGV[3], 'l', ARGV[5], 'g', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// heartbeatScript: KEYS[1] record. ARGV: at ms. While running, moves l on
// to at (never back). Returns 1 when running, 0 when not, false when
// missing.
var heartbeatScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 's', 'l')
if not v[1] then return false end
if v[1] ~= 'running' then return 0 end
if not v[2] or tonumber(ARGV[1]) > tonumber(v[2]) then
  redis.call('HSET', KEYS[1], 'l', ARGV[1])
end
return 1
`)

// dropUnsettledScript: KEYS[1] cs:unsettled, the only key, so the script
// runs in that key's slot. ARGV: id, score, id, score…. Removes each id
// whose score is still the one given: an entry a reader judged stale is
// kept if a transition rewrote it since the reader read it. Returns how
// many it removed.
var dropUnsettledScript = redis.NewScript(`
local n = 0
for i = 1, #ARGV, 2 do
  local sc = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if sc and tonumber(sc) == tonumber(ARGV[i + 1]) then
    n = n + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return n
`)

// setRefScript: KEYS[1] record. ARGV: ref. Returns 1, or false when
// missing (a plain HSET would create a stray record).
var setRefScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'm', ARGV[1])
return 1
`)

// setPreviewScript: KEYS[1] record. ARGV: preview JSON. While pending,
// sets p. Returns {ok 0|1, HGETALL}.
var setPreviewScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'pending' then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 'p', ARGV[1])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// Turn keys: KEYS[1] hash {r: turn JSON, p:<approval id>: the id's place
// in the turn's order (1, 2, …) while it is pending, z: set once when the
// turn was resumed}; KEYS[2] is the set of pending ids that versions
// before the p: fields kept, with the order as field o of the hash. A turn
// saved that way is still read and resolved the old way (it has field o);
// SaveTurn writes only the hash, one key fewer per turn.

// saveTurnScript: ARGV: r, ttl ms, pending ids… in order. Replaces the
// turn and starts a new suspension (z cleared).
var saveTurnScript = redis.NewScript(`
redis.call('DEL', KEYS[1], KEYS[2])
local f = {'r', ARGV[1]}
for i = 3, #ARGV do
  f[#f + 1] = 'p:' .. ARGV[i]
  f[#f + 1] = i - 2
end
redis.call('HSET', KEYS[1], unpack(f))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// getTurnScript: returns {HGETALL, members of the old set} or false when
// missing.
var getTurnScript = redis.NewScript(`
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return false end
return {h, redis.call('SMEMBERS', KEYS[2])}
`)

// resolveScript: ARGV: approval id. Returns -1 when the turn is missing,
// 1 to exactly one caller: the one that removed the last pending id, and
// only if the turn was not resumed before; 0 otherwise.
var resolveScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'o') == 1 then
  if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
  if redis.call('SCARD', KEYS[2]) > 0 then return 0 end
else
  if redis.call('HDEL', KEYS[1], 'p:' .. ARGV[1]) == 0 then return 0 end
  local fixed = 1 + redis.call('HEXISTS', KEYS[1], 'z')
  if redis.call('HLEN', KEYS[1]) > fixed then return 0 end
end
if redis.call('HSETNX', KEYS[1], 'z', '1') == 0 then return 0 end
return 1
`)
