package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/redisstore"
)

// stormOnCards is the two-replica test's 429 storm: Slack refuses every
// chat.postMessage for a while as cards are asked for on A, then every
// chat.update (503, then 429) as they are approved on B. Each card
// arrives once the storm passes, is decided once, runs once, and shows its
// final state: chat trouble delays a card, never cancels it.
func stormOnCards(t *testing.T, bin string, redis *redisServer, figures *replicaFigures) {
	const asked = 3
	e := newReplicaEnv(t, bin, redis, 7, 5*time.Minute)
	a, b := e.start("A"), e.start("B")

	// Posts refused: 12 times 429 with a Retry-After of 1s, longer than
	// the bot's old four attempts, and the working line and the cards
	// all wait it out.
	e.fake.Storm("chat.postMessage", 12, http.StatusTooManyRequests, 1)
	type card struct {
		token, thread, id string
	}
	var all []card
	for i := range asked {
		token := fmt.Sprintf("w%d", i+1)
		e.toward(a)
		thread := e.fake.MentionOnce(alice, slackChannel, "", "please append "+token)
		all = append(all, card{token: token, thread: thread})
	}
	storming := e.fake.Stormed()
	shown := map[string]slacktest.Message{} // token → its card
	for i := range all {
		c := e.card(all[i].thread)
		all[i].id = approvalID(t, c)
		shown[all[i].token] = c
		if v := e.view(c); !strings.Contains(v, "waiting for a decision") {
			t.Errorf("%s's card after the storm is not pending:\n%s", all[i].token, v)
		}
	}

	// Updates refused as the cards are approved on B: 503 until a few
	// were refused, then 6 x 429.
	e.fake.Storm("chat.update", -1, http.StatusServiceUnavailable, 0)
	for _, c := range all {
		e.fake.Acked(t, e.click(b, bob, shown[c.token], true, c.id))
	}
	e.fake.Wait(t, "503s on chat.update", func() bool { return e.fake.Stormed() >= storming+6 })
	unavailable := e.fake.Stormed() - storming
	e.fake.Storm("chat.update", 6, http.StatusTooManyRequests, 1)
	e.fake.Wait(t, "429s on chat.update", func() bool { return e.fake.Stormed() >= storming+unavailable+6 })
	lost := 0
	for _, c := range all {
		threadHas(t, e.fake, c.thread, "Finished "+c.token+".")
		e.fake.Wait(t, c.token+"'s final state on its card", func() bool {
			v := e.view(shown[c.token])
			return strings.Contains(v, "approved by bob") && strings.Contains(v, "exit code 0")
		})
		if n := e.runs(c.token); n != 1 {
			t.Errorf("%s ran %d times, want once", c.token, n)
			lost++
		}
		if n := len(cards(e.fake, c.thread)); n != 1 {
			t.Errorf("%d cards in %s's thread, want 1", n, c.token)
		}
		if r := e.model.resumed(c.token); len(r) != 1 {
			t.Errorf("%s's turn resumed %d times, want once", c.token, len(r))
		}
	}
	for _, r := range []*replica{a, b} {
		if strings.Contains(r.stderr(), "the approval card could not be posted") {
			t.Errorf("%s cancelled a card because Slack was busy:\n%s", r.name, lastLines(r.stderr(), 20))
		}
	}
	figures.set(t, "429 storm", fmt.Sprintf("%d cards asked on A while chat.postMessage answered 12 x 429 (Retry-After 1s), approved on B while chat.update answered %d x 503 then 6 x 429: cards lost %d, cancelled 0, decided and run once %d of %d",
		asked, unavailable, lost, asked-lost, asked))
}

// forcedQuit: a second SIGTERM while an approved `sleep` runs ends the
// process at once, kills the command's whole process group (no orphan)
// and records the call as stopped by the forced quit.
func forcedQuit(t *testing.T, bin string, redis *redisServer, figures *replicaFigures) {
	e := newReplicaEnv(t, bin, redis, 8, 5*time.Minute)
	a := e.start("A")
	_, card := e.ask(a, "append-slow", "fq")
	id := approvalID(t, card)
	e.fake.Acked(t, e.click(a, bob, card, true, id))
	pidFile := filepath.Join(e.root, "fq.pid")
	var shell int
	pollUntil(t, 10*time.Second, "the approved command running", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		shell, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && shell > 1
	})
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 10*time.Second, "A saying it shuts down", func() bool { return strings.Contains(a.stderr(), "shutting down") })
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	select {
	case <-a.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("A did not quit within 20s of a second SIGTERM:\n%s", lastLines(a.stderr(), 20))
	}
	took := time.Since(signalled)
	left := liveIn(e.root)
	if len(left) != 0 {
		t.Errorf("processes of the approved command outlived the forced quit: %v", left)
		killCommands("sleep 60")
	}
	o := mustRedisOptions(t, e.redis.url(e.db))
	s := redisstore.New(goredis.NewClient(o), redisstore.Options{Logger: slog.New(slog.DiscardHandler)})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != approval.Failed || rec.Result == nil || !strings.Contains(rec.Result.Message, "forced quit") {
		msg := ""
		if rec.Result != nil {
			msg = rec.Result.Message
		}
		t.Errorf("after the forced quit the call is %s (%q); want failed, stopped by a forced quit\n%s", rec.State, msg, lastLines(a.stderr(), 20))
	}
	figures.set(t, "forced quit", fmt.Sprintf("second SIGTERM during an approved sleep 60: exited %s after it, orphans %d, recorded %s", took.Round(10*time.Millisecond), len(left), rec.State))
}

// liveIn lists the live processes (not zombies) whose working folder is
// dir.
func liveIn(dir string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || cwd != dir {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}
