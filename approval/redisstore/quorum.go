package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
)

var _ approval.Quorum = (*Store)(nil)

// Votes live in the approval record's own hash, beside the fields of
// scripts.go, so that one script over one key (one slot of a cluster)
// counts a vote and makes the transition:
//
//	q        the number of approvals needed, fixed by the first vote
//	vc       how many votes are counted
//	v:<n>    the nth counted vote, JSON of approval.Vote (who, when, reason)
//	vu:<id>  set when user <id> has a counted vote: the distinctness check
//
// The reply codes of approveScript.
const (
	voteDecided   = 0 // not pending: nothing changed
	voteApproved  = 1 // the Nth vote: pending → approved (won)
	voteRequester = 2 // the requester, without self-approval: not counted
	voteRepeat    = 3 // this person's vote is already counted
	voteExpired   = 4 // at or after the deadline: pending → expired (won)
	voteCounted   = 5 // counted, more are needed
)

// approveScript: KEYS as decideScript's (KEYS[1] alone for a record of an
// earlier version). ARGV: voter id, vote JSON, need, at ms,
// decided_by JSON, decided_at, reason, ttl ms, self-approval "1"|"0".
// The refusals change nothing. A counted vote at the count makes the
// transition of decideScript (s, b, d, n, l and the TTL), and so does a
// vote at or after the deadline, to expired, as decideScript does for a
// late approval, and either leaves the pending index. Returns {code, HGETALL}, or false when the record is
// missing.
var approveScript = redis.NewScript(unindexLua + `
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'pending' then return {0, redis.call('HGETALL', KEYS[1])} end
if ARGV[9] ~= '1' then
  local ok, r = pcall(cjson.decode, redis.call('HGET', KEYS[1], 'r'))
  if not ok or type(r) ~= 'table' or type(r.requester) ~= 'table' then
    return redis.error_reply('approval record is not readable JSON')
  end
  if r.requester.id == ARGV[1] then return {2, redis.call('HGETALL', KEYS[1])} end
end
if redis.call('HEXISTS', KEYS[1], 'vu:' .. ARGV[1]) == 1 then
  return {3, redis.call('HGETALL', KEYS[1])}
end
if tonumber(ARGV[4]) >= tonumber(redis.call('HGET', KEYS[1], 'e')) then
  redis.call('HSET', KEYS[1], 's', 'expired', 'b', ARGV[5], 'd', ARGV[6], 'n', ARGV[7], 'l', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[8])
  unindex()
  return {4, redis.call('HGETALL', KEYS[1])}
end
local need = tonumber(redis.call('HGET', KEYS[1], 'q'))
if not need then
  need = tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'q', ARGV[3])
end
local c = redis.call('HINCRBY', KEYS[1], 'vc', 1)
redis.call('HSET', KEYS[1], 'v:' .. c, ARGV[2], 'vu:' .. ARGV[1], c)
if c < need then return {5, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 's', 'approved', 'b', ARGV[5], 'd', ARGV[6], 'n', ARGV[7], 'l', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
unindex()
return {1, redis.call('HGETALL', KEYS[1])}
`)

// resetVotesScript: KEYS[1] record. While pending, deletes the vote
// fields (v:*, vu:*, vc) and keeps q. Returns the number of votes
// deleted, -1 when not pending, false when missing.
var resetVotesScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return false end
if s ~= 'pending' then return -1 end
local n = tonumber(redis.call('HGET', KEYS[1], 'vc') or '0')
local del = {'vc'}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 2) == 'v:' or string.sub(f, 1, 3) == 'vu:' then del[#del + 1] = f end
end
redis.call('HDEL', KEYS[1], unpack(del))
return n
`)

// ResetVotes forgets the votes of a pending approval in one Lua script,
// keeping its Need.
func (s *Store) ResetVotes(ctx context.Context, id string) (int, error) {
	n, err := redis.NewCmdResult(s.eval(ctx, resetVotesScript, id)).Int()
	if errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("reset votes of approval %s: %w", id, approval.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("reset votes of approval %s: %w", id, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("reset votes of approval %s: %w: it is no longer pending", id, approval.ErrConflict)
	}
	return n, nil
}

// Approve counts v towards the approval id in one Lua script and, at the
// Nth distinct vote, moves it to Approved as Decide does. See
// approval.Quorum.
func (s *Store) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	if err := approval.CheckVote(id, v); err != nil {
		return approval.ApproveResult{}, err
	}
	need, self := v.Need, "0"
	if v.SelfApproval {
		self = "1"
	}
	vote, err := json.Marshal(v)
	if err != nil {
		return approval.ApproveResult{}, fmt.Errorf("encode vote on %s: %w", id, err)
	}
	by, err := json.Marshal(v.By)
	if err != nil {
		return approval.ApproveResult{}, fmt.Errorf("encode voter on %s: %w", id, err)
	}
	// As in transition, the unsettled mark goes first, in the same round
	// trip on one server, so that a process dying right after the winning
	// vote leaves an entry for Unsettled. A vote that does not win leaves
	// an entry of a pending record, which Unsettled drops.
	reply, markErr, err := s.markAndRun(ctx, "approve", approveScript, id, v.At, false,
		v.By.ID, vote, need, v.At.UnixMilli(), by, timeText(v.At), v.Reason, ms(s.retention), self)
	if err != nil {
		return approval.ApproveResult{}, err
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) != 2 {
		return approval.ApproveResult{}, fmt.Errorf("approve approval %s: unexpected script reply %T", id, reply)
	}
	code, _ := arr[0].(int64)
	a, m, _, err := decodeFields(id, []any{int64(0), arr[1]})
	if err != nil {
		return approval.ApproveResult{}, err
	}
	p, err := progressOf(id, m)
	if err != nil {
		return approval.ApproveResult{}, err
	}
	res := approval.ApproveResult{Approval: a, Progress: p}
	switch code {
	case voteDecided:
		res.Refused = approval.RefusedDecided
	case voteRequester:
		res.Refused = approval.RefusedRequester
	case voteRepeat:
		res.Refused = approval.RefusedRepeat
	case voteCounted:
		res.Counted = true
	case voteApproved:
		res.Counted, res.Won = true, true
	case voteExpired:
		res.Won = true
	default:
		return approval.ApproveResult{}, fmt.Errorf("approve approval %s: unexpected script code %d", id, code)
	}
	if markErr != nil && res.Won {
		s.markAgain(ctx, id, v.At, false)
	}
	if a.State != approval.Pending {
		// Out of the indexes, as after Decide, whoever won.
		_, _ = s.c.Pipelined(ctx, func(pl redis.Pipeliner) error {
			pl.ZRem(ctx, s.dueKey(), id)
			pl.ZRem(ctx, s.legacyPendingKey(a.Conversation.Platform, a.Conversation.Channel), id)
			return nil
		})
	}
	return res, nil
}

// Progress returns the votes counted for id so far.
func (s *Store) Progress(ctx context.Context, id string) (approval.Progress, error) {
	recs, err := s.hgetAll(ctx, []string{id})
	if err != nil {
		return approval.Progress{}, fmt.Errorf("progress of approval %s: %w", id, err)
	}
	m := recs[0]
	if len(m) == 0 || m["r"] == "" {
		return approval.Progress{}, fmt.Errorf("progress of approval %s: %w", id, approval.ErrNotFound)
	}
	return progressOf(id, m)
}

// progressOf reads the vote fields of a record's hash.
func progressOf(id string, m map[string]string) (approval.Progress, error) {
	p := approval.Progress{Votes: []approval.Vote{}}
	if q := m["q"]; q != "" {
		n, err := strconv.Atoi(q)
		if err != nil {
			return approval.Progress{}, fmt.Errorf("decode approval %s need %q: %w", id, q, err)
		}
		p.Need = n
	}
	type numbered struct {
		n int
		v approval.Vote
	}
	var votes []numbered
	for k, val := range m {
		rest, ok := strings.CutPrefix(k, "v:")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			return approval.Progress{}, fmt.Errorf("decode approval %s vote field %q: %w", id, k, err)
		}
		var v approval.Vote
		if err := json.Unmarshal([]byte(val), &v); err != nil {
			return approval.Progress{}, fmt.Errorf("decode approval %s vote %d: %w", id, n, err)
		}
		votes = append(votes, numbered{n, v})
	}
	slices.SortFunc(votes, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
	for _, v := range votes {
		p.Votes = append(p.Votes, v.v)
	}
	return p, nil
}
