package adapters

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestParseDecision(t *testing.T) {
	tests := []struct {
		name string
		text string
		want Decision
		ok   bool
	}{
		{"approve", "approve a1b2c3", Decision{ApprovalID: "a1b2c3", Approve: true}, true},
		{"approve with spaces and case", "  Approve   a1b2c3  ", Decision{ApprovalID: "a1b2c3", Approve: true}, true},
		{"approve in backticks", "approve `a1b2c3`", Decision{ApprovalID: "a1b2c3", Approve: true}, true},
		{"cancel", "cancel a1b2c3", Decision{ApprovalID: "a1b2c3"}, true},
		{"cancel with reason", "cancel a1b2c3 wrong folder, use /srv", Decision{ApprovalID: "a1b2c3", Reason: "wrong folder, use /srv"}, true},
		{"tabs separate too", "approve\ta1b2c3", Decision{ApprovalID: "a1b2c3", Approve: true}, true},
		{"deny means cancel", "deny a1b2c3", Decision{ApprovalID: "a1b2c3"}, true},
		{"approve with more words names a card the bot looks for", "approve the plan", Decision{ApprovalID: "the", Approve: true, Reason: "plan"}, true},
		{"approve with a reason", "approve a1b2c3 checked the backup", Decision{ApprovalID: "a1b2c3", Approve: true, Reason: "checked the backup"}, true},
		{"bare approve: the one card waiting", "approve", Decision{Approve: true}, true},
		{"bare cancel", "cancel   ", Decision{}, true},
		{"bare approve with punctuation", "Approve!", Decision{Approve: true}, true},
		{"other verb", "run a1b2c3", Decision{}, false},
		{"punctuation in id is kept for the bot to answer", "cancel that, please", Decision{ApprovalID: "that,", Reason: "please"}, true},
		{"empty", "", Decision{}, false},
		{"prefix word", "approved a1b2c3", Decision{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseDecision(tc.text)
			if ok != tc.ok || got != tc.want {
				t.Errorf("ParseDecision(%q) = %+v, %v; want %+v, %v", tc.text, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestButtonWords(t *testing.T) {
	tests := []struct {
		name string
		b    Button
		want string
	}{
		{"approve", Button{Label: "Approve", Approve: true, Value: "x1"}, "approve x1"},
		{"cancel", Button{Label: "Cancel", Value: "x1"}, "cancel x1 [reason]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.b.Words(); got != tc.want {
				t.Errorf("Words() = %q, want %q", got, tc.want)
			}
			d, ok := ParseDecision(tc.b.Words())
			if tc.b.Approve && (!ok || d.ApprovalID != tc.b.Value || !d.Approve) {
				t.Errorf("the words %q do not parse back to an approval of %s: %+v %v", tc.b.Words(), tc.b.Value, d, ok)
			}
		})
	}
}

// declared is an adapter that declares x.
type declared struct {
	Adapter
	x Extras
}

func (d declared) Extras() Extras { return d.x }

func TestHasButtons(t *testing.T) {
	tests := []struct {
		name string
		a    Adapter
		want bool
	}{
		{"no extras", declared{}, false},
		{"extras without buttons", declared{x: Extras{Forms: true, Home: homeless{}}}, false},
		{"buttons", declared{x: Extras{Buttons: true}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasButtons(tc.a); got != tc.want {
				t.Errorf("HasButtons = %v, want %v", got, tc.want)
			}
		})
	}
}

type homeless struct{}

func (homeless) PublishHome(context.Context, User, []HomeItem) error { return nil }
func (homeless) Member(context.Context, string, User) (bool, error)  { return false, nil }

// turnful shows a turn's status and stream (it does nothing).
type turnful struct{ Adapter }

func (turnful) SetStatus(context.Context, Place, string) error           { return nil }
func (turnful) StartStream(context.Context, Place, User) (Stream, error) { return nil, ErrNoStream }

type linked struct{}

func (linked) Connected() bool     { return true }
func (linked) Undelivered() uint64 { return 0 }
func (linked) Permalink(context.Context, Place, string) (string, error) {
	return "https://chat.test/p1", nil
}
func (linked) UserByEmail(context.Context, string) (string, error) { return "U1", nil }

// TestExtrasList: List names every extra, each exactly once, as had or
// as lacking with its fallback; an extra added to Extras without a name
// and a fallback fails here.
func TestExtrasList(t *testing.T) {
	ts := turnful{}
	all := Extras{Buttons: true, Forms: true, Status: ts, Stream: ts, WholeText: true, Home: homeless{}, Undelivered: linked{}, Link: linked{}, Permalink: linked{}, ByEmail: linked{}}
	// Every field but WholeText (a property of Stream) is an extra.
	fields := reflect.TypeFor[Extras]().NumField() - 1
	has, lacks := all.List()
	if len(has) != fields || len(lacks) != 0 {
		t.Errorf("every extra: has %v, lacks %v; want the %d extras had", has, lacks, fields)
	}
	for i := range reflect.TypeFor[Extras]().NumField() {
		f := reflect.ValueOf(all).Field(i)
		if f.IsZero() {
			t.Errorf("the test sets no Extras.%s", reflect.TypeFor[Extras]().Field(i).Name)
		}
	}
	has, lacks = Extras{}.List()
	if len(has) != 0 || len(lacks) != fields {
		t.Fatalf("no extra: has %v, lacks %v; want the %d extras lacking", has, lacks, fields)
	}
	for _, l := range lacks {
		name, why, ok := strings.Cut(l, " (")
		if !ok || name == "" || len(why) < 10 || !strings.HasSuffix(why, ")") {
			t.Errorf("lacking %q: want the extra's name and its fallback in brackets", l)
		}
	}
	has, lacks = Extras{Buttons: true, Home: homeless{}}.List()
	if !slices.Equal(has, []string{"buttons", "home"}) || len(lacks) != fields-2 {
		t.Errorf("buttons and home: has %v, lacks %v", has, lacks)
	}
}

func TestHandlerFunc(t *testing.T) {
	var got Event
	h := HandlerFunc(func(_ context.Context, e Event) { got = e })
	h.Handle(context.Background(), Event{ID: "e1", Text: "hi"})
	if got.ID != "e1" || got.Text != "hi" {
		t.Errorf("HandlerFunc did not pass the event: %+v", got)
	}
}

// FuzzParseDecision: no text makes ParseDecision panic, and a decision it
// reads always names a plausible id and round-trips through Button.Words.
func FuzzParseDecision(f *testing.F) {
	for _, s := range []string{"approve abc", "cancel abc because", "deny x_1", "approve", "approve a b", "cancel `x` y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, ok := ParseDecision(text)
		if !ok {
			return
		}
		if strings.ContainsFunc(d.ApprovalID, unicode.IsSpace) {
			t.Fatalf("ParseDecision(%q) read an id with white space: %q", text, d.ApprovalID)
		}
		if d.Approve && d.ApprovalID != "" && !strings.ContainsAny(d.ApprovalID, "`<>") {
			again, ok := ParseDecision(Button{Approve: true, Value: d.ApprovalID}.Words())
			if d.Reason = ""; !ok || again != d {
				t.Fatalf("approve %q does not round-trip: %+v", d.ApprovalID, again)
			}
		}
	})
}

func TestVisible(t *testing.T) {
	tests := []struct {
		name, in, want string
		changed        bool
	}{
		{"plain command", "rm -rf ./tmp_*", "rm -rf ./tmp_*", false},
		{"newlines and tabs stay", "SELECT 1\n\tFROM t", "SELECT 1\n\tFROM t", false},
		{"accents stay", "echo café 日本", "echo café 日本", false},
		{"ANSI escape that repaints the line", "rm -rf /\x1b[2K\recho hi", `rm -rf /\x1b[2K\x0decho hi`, true},
		{"carriage return alone", "ls\rrm -rf ~", `ls\x0drm -rf ~`, true},
		{"backspace", "rm -rf /x\b\b", `rm -rf /x\x08\x08`, true},
		{"bidi override", "echo \u202ehsab | fr- mr", `echo \u202ehsab | fr- mr`, true},
		{"bidi isolate", "ls \u2066x\u2069", `ls \u2066x\u2069`, true},
		{"zero width space", "r\u200bm", `r\u200bm`, true},
		{"byte order mark", "\ufeffls", `\ufeffls`, true},
		{"no-break space", "rm\u00a0-rf", `rm\u00a0-rf`, true},
		{"line separator", "ls\u2028rm", `ls\u2028rm`, true},
		{"C1 control", "ls\u009b2J", `ls\u009b2J`, true},
		{"DEL", "ls\x7f", `ls\x7f`, true},
		{"Hangul filler", "rm\u3164-rf", `rm\u3164-rf`, true},
		{"invalid UTF-8", "ls \xff\xfe", `ls \xff\xfe`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := Visible(tc.in)
			if got != tc.want || changed != tc.changed {
				t.Errorf("Visible(%q) = %q, %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
			}
		})
	}
}
