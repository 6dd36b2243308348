package terminal

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// syncBuffer is a bytes.Buffer safe for the adapter's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness drives a Terminal through a pipe, as piped stdin would.
type harness struct {
	term *Terminal
	in   *io.PipeWriter
	out  *syncBuffer
}

func newHarness(t *testing.T) adaptertest.Harness {
	r, w := io.Pipe()
	out := &syncBuffer{}
	h := &harness{term: New(r, out, Options{User: "alice", Color: "never"}), in: w, out: out}
	t.Cleanup(func() { _ = w.Close() })
	return h
}

func (h *harness) Adapter() adapters.Adapter { return h.term }
func (h *harness) Place() adapters.Place     { return adapters.Place{Channel: Channel, Thread: Thread} }

func (h *harness) write(t testing.TB, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(h.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatalf("write to the terminal's input: %v", err)
	}
}

func (h *harness) Say(t testing.TB, u adapters.User, _ adapters.Place, text string) {
	h.write(t, "/as "+u.ID, text)
}

func (h *harness) Decide(t testing.TB, u adapters.User, _ adapters.Place, _ string, b adapters.Button, reason string) {
	line := "approve " + b.Value
	if !b.Approve {
		line = strings.TrimSpace("cancel " + b.Value + " " + reason)
	}
	h.write(t, "/as "+u.ID, line)
}

func (h *harness) View(t testing.TB, _ adapters.Place, ref string) string {
	h.term.mu.Lock()
	defer h.term.mu.Unlock()
	v, ok := h.term.rendered[ref]
	if !ok {
		t.Fatalf("no message %s was posted", ref)
	}
	return v
}

// Notices reads the output: a notice for bob is the line "(to bob only) ...".
func (h *harness) Notices(_ testing.TB, u adapters.User) []string {
	var out []string
	prefix := "(to " + u.Display() + " only) "
	for _, l := range strings.Split(h.out.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (h *harness) End(testing.TB) { _ = h.in.Close() }

func TestConformance(t *testing.T) {
	adaptertest.Run(t, newHarness)
}

func TestLines(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		events []adapters.Event
		out    []string // substrings of the output
	}{
		{
			name:   "a message as the starting user",
			input:  "what is using the disk?\n",
			events: []adapters.Event{{ID: "t1", User: person("carol"), Text: "what is using the disk?"}},
		},
		{
			name:   "/as switches who speaks",
			input:  "!run ls\n/as bob\napprove k3y\n",
			events: []adapters.Event{{ID: "t1", User: person("carol"), Text: "!run ls"}, {ID: "t2", User: person("bob"), Text: "approve k3y", Decision: &adapters.Decision{ApprovalID: "k3y", Approve: true}}},
			out:    []string{"you are now bob"},
		},
		{
			name:   "cancel with a reason",
			input:  "cancel k3y not on a friday\n",
			events: []adapters.Event{{ID: "t1", User: person("carol"), Text: "cancel k3y not on a friday", Decision: &adapters.Decision{ApprovalID: "k3y", Reason: "not on a friday"}}},
		},
		{
			name:  "blank lines and terminal commands make no events",
			input: "\n   \n/help\n/whoami\n/as\n/frobnicate\n",
			out:   []string{"approve <id>", "you are carol", "usage: /as <name>", "unknown command /frobnicate"},
		},
		{
			name:   "/quit ends the session before later lines",
			input:  "first\n/quit\nnever\n",
			events: []adapters.Event{{ID: "t1", User: person("carol"), Text: "first"}},
		},
		{
			name:   "no newline at the end",
			input:  "  last line  ",
			events: []adapters.Event{{ID: "t1", User: person("carol"), Text: "last line"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			term := New(strings.NewReader(tc.input), &out, Options{User: "carol", Color: "never"})
			var got []adapters.Event
			err := term.Run(context.Background(), adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
				got = append(got, e)
			}))
			if err != nil {
				t.Fatalf("Run = %v, want nil at the end of input", err)
			}
			for i := range tc.events {
				tc.events[i].Place = adapters.Place{Channel: Channel, Thread: Thread}
			}
			if len(got) != len(tc.events) {
				t.Fatalf("got %d events %+v, want %d", len(got), got, len(tc.events))
			}
			for i, want := range tc.events {
				g := got[i]
				// Ids are a per-process random prefix and a counter:
				// "t2" stands for the second line's "<prefix>-2".
				if !strings.HasSuffix(g.ID, "-"+strings.TrimPrefix(want.ID, "t")) || g.User.ID != want.User.ID || g.Text != want.Text || g.Place != want.Place {
					t.Errorf("event %d = %+v, want %+v", i, g, want)
				}
				if (g.Decision == nil) != (want.Decision == nil) || g.Decision != nil && *g.Decision != *want.Decision {
					t.Errorf("event %d decision = %+v, want %+v", i, g.Decision, want.Decision)
				}
			}
			for _, s := range tc.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

func person(name string) adapters.User { return adapters.User{ID: name, Name: name} }

func TestDefaultUser(t *testing.T) {
	tests := []struct {
		name, opt, env, want string
	}{
		{"option wins", "dana", "erin", "dana"},
		{"then $USER", "", "erin", "erin"},
		{"a bad option falls back", "two words", "erin", "erin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("USER", tc.env)
			if got := New(strings.NewReader(""), io.Discard, Options{User: tc.opt}).User(); got != tc.want {
				t.Errorf("user = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestColor(t *testing.T) {
	tests := []struct {
		name, opt, noColor string
		want               bool
	}{
		{"auto on a pipe is plain", "auto", "", false},
		{"always", "always", "", true},
		{"never", "never", "", false},
		{"NO_COLOR does not beat always", "always", "1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			term := New(strings.NewReader(""), &bytes.Buffer{}, Options{Color: tc.opt})
			if term.color != tc.want {
				t.Errorf("colour = %v, want %v", term.color, tc.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"zero", Options{}, ""},
		{"all set", Options{User: "bob", Color: "always"}, ""},
		{"bad colour", Options{Color: "rainbow"}, "terminal.color"},
		{"bad user", Options{User: "bob smith"}, "terminal.user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.wantErr)
			}
		})
	}
}

func TestUpdates(t *testing.T) {
	var out bytes.Buffer
	term := New(strings.NewReader(""), &out, Options{Color: "never"})
	ctx := context.Background()
	p := adapters.Place{Channel: Channel, Thread: Thread}
	c := adaptertest.PendingCard("a1")
	ref, err := term.Post(ctx, p, adapters.Content{Card: &c})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		card     adapters.Card
		wantLine string // a line the update prints
		silent   bool
	}{
		{"unchanged prints nothing", c, "", true},
		{"running prints the card", running(c, "running for 1s", ""), "● running for 1s", false},
		{"progress prints one line", running(c, "running for 4s", "line 1\nline 2"), "  [a1] running for 4s: line 2", false},
		{"done prints the card", adaptertest.DoneCard("a1"), "    removed tmp_b", false},
	}
	for _, st := range steps {
		out.Reset()
		card := st.card
		if err := term.Update(ctx, p, ref, adapters.Content{Card: &card}); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.silent && out.Len() != 0 {
			t.Errorf("%s: printed %q", st.name, out.String())
		}
		if !st.silent && !strings.Contains(out.String(), st.wantLine+"\n") {
			t.Errorf("%s: output lacks %q:\n%s", st.name, st.wantLine, out.String())
		}
		if strings.Contains(out.String(), "why:") || strings.Contains(out.String(), "preview:") {
			t.Errorf("%s: the update repeats the whole card:\n%s", st.name, out.String())
		}
		if st.name == "progress prints one line" && strings.Count(out.String(), "\n") != 1 {
			t.Errorf("%s: printed more than one line:\n%s", st.name, out.String())
		}
	}
	if err := term.Update(ctx, p, "m999", adapters.Content{Text: "x"}); err == nil {
		t.Error("updating an unknown message succeeded")
	}
}

func running(c adapters.Card, line, output string) adapters.Card {
	c.State = "running"
	c.StateLine = line
	c.Output = output
	c.Buttons = nil
	return c
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name  string
		c     adapters.Content
		color bool
	}{
		{name: "pending", c: adapters.Content{Card: ptr(adaptertest.PendingCard("a1b2c3"))}},
		{name: "pending_color", c: adapters.Content{Card: ptr(adaptertest.PendingCard("a1b2c3"))}, color: true},
		{name: "done", c: adapters.Content{Card: ptr(adaptertest.DoneCard("a1b2c3"))}},
		{name: "sql_preview_error", c: adapters.Content{Card: &adapters.Card{
			ApprovalID: "q9", Title: "Run this SQL?", Requester: "alice", Conversation: "terminal",
			Tool: "execute_sql", Operation: "DELETE FROM orders\nWHERE created < '2020-01-01'", Risk: "medium",
			Reasons: []string{"DELETE changes data"}, Preview: &adapters.Preview{Err: "EXPLAIN failed"},
			ExpiresAt: time.Date(2026, 11, 22, 6, 15, 0, 0, time.UTC), State: "pending", StateLine: "waiting for a decision",
			Buttons: []adapters.Button{{Label: "Approve", Approve: true, Value: "q9"}, {Label: "Cancel", Value: "q9"}},
		}}},
		{name: "expired_with_more", c: adapters.Content{Card: &adapters.Card{
			ApprovalID: "e7", Title: "Run this command?", Requester: "alice", Tool: "execute_command",
			Operation: "find . -name '*.log' -delete", Risk: "high", Reasons: []string{"find -delete deletes files"},
			Preview: &adapters.Preview{Summary: "3 of 40 files", Items: []string{"a.log", "b.log", "c.log"}, More: 37},
			State:   "expired", StateLine: "expired at 05:55:00 UTC: nobody decided in time",
		}}},
		{name: "text", c: adapters.Content{Text: "Here is what I found:\ntmp_a\ntmp_b"}},
		{name: "text_with_code", c: adapters.Content{Text: "`ls` exit 0 · 3 ms\n```\nkeep.txt\ntmp_a\n```\nDone."}},
		{name: "hostile_output", c: adapters.Content{Card: &adapters.Card{
			ApprovalID: "h1", Tool: "execute_command", Operation: "cat notes", Risk: "low", State: "done",
			StateLine: "done: exit code 0", Output: "ok\x1b[2J\x1b[31mfake card\r\n", Note: "output truncated to 1 KiB",
		}}},
		// What runs deletes ./data; raw, the carriage return and the bidi
		// override would make the card show an echo and a reversed name.
		{name: "hostile_operation", c: adapters.Content{Card: &adapters.Card{
			ApprovalID: "h2", Tool: "execute_command", Risk: "high", State: "pending",
			Operation: "rm -rf ./data\r\x1b[2Kecho hello # \u202etxt.exe",
			Buttons:   []adapters.Button{{Label: "Approve", Approve: true, Value: "h2"}},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			term := &Terminal{color: tc.color}
			got := term.render(tc.c) + "\n"
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("render differs from %s (run with -update if the change is intended):\n got:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestRunWaitsForTheHandler: lines are handled one at a time, in order, so
// a piped script sees the effect of one line before the next.
func TestRunHandlesLinesOneAtATime(t *testing.T) {
	term := New(strings.NewReader("a\nb\nc\n"), io.Discard, Options{Color: "never"})
	var mu sync.Mutex
	inside := 0
	var order []string
	err := term.Run(context.Background(), adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
		mu.Lock()
		inside++
		if inside > 1 {
			t.Errorf("two lines handled at once")
		}
		order = append(order, e.Text)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		inside--
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, "") != "abc" {
		t.Errorf("order = %v", order)
	}
}

func BenchmarkRenderCard(b *testing.B) {
	c := adaptertest.PendingCard("abcdefghijklmnopqrstuvwxyz")
	for _, color := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "color"}[color], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = renderCard(c, paintWith(color))
			}
		})
	}
}

// TestLastLine: a running card's progress line shows the output's last
// line, cut to 120 bytes without splitting a character.
func TestLastLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"last of several", "one\ntwo\nthree\n", "three"},
		{"short", "ok", "ok"},
		{"cut", strings.Repeat("a", 130), strings.Repeat("a", 120) + "…"},
		{"cut before a split character", "a" + strings.Repeat("é", 70), "a" + strings.Repeat("é", 59) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lastLine(tt.in); got != tt.want {
				t.Errorf("lastLine = %q, want %q", got, tt.want)
			}
		})
	}
}
