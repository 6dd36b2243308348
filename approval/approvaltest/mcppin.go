package approvaltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/approval"
)

// RunMCPPins runs the contract of approval.MCPPinner against the stores
// open gives (clients of one ns share their data).
func RunMCPPins(t *testing.T, open Opener) {
	t.Run("FirstPinWins", func(t *testing.T) { testPinFirst(t, func() approval.Store { return open(t, "pins-first") }) })
	t.Run("Accept", func(t *testing.T) { testPinAccept(t, func() approval.Store { return open(t, "pins-accept") }) })
	t.Run("Race", func(t *testing.T) { testPinRace(t, func() approval.Store { return open(t, "pins-race") }) })
	t.Run("Invalid", func(t *testing.T) { testPinInvalid(t, func() approval.Store { return open(t, "pins-invalid") }) })
}

// pinner is s's pins: part of every approval.Store.
func pinner(t *testing.T, s approval.Store) approval.MCPPinner {
	t.Helper()
	return s
}

// testPinFirst: the first hash seen is the pin, on every client, until an
// accept; servers and tools are kept apart.
func testPinFirst(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	a, b := pinner(t, open()), pinner(t, open())
	steps := []struct {
		name         string
		p            approval.MCPPinner
		server, tool string
		hash, want   string
	}{
		{"first sight pins", a, "fs", "read_file", "h1", "h1"},
		{"a changed tool keeps the old pin", a, "fs", "read_file", "h2", "h1"},
		{"another client sees the same pin", b, "fs", "read_file", "h3", "h1"},
		{"another tool", b, "fs", "write_file", "w1", "w1"},
		{"the same tool on another server", a, "other", "read_file", "o1", "o1"},
		{"odd bytes in names", a, "s{x}:*", "t\x00 \n", "z1", "z1"},
		{"odd bytes again", b, "s{x}:*", "t\x00 \n", "z2", "z1"},
	}
	for _, st := range steps {
		got, err := st.p.PinMCP(ctx, st.server, st.tool, st.hash)
		if err != nil {
			t.Fatalf("%s: PinMCP: %v", st.name, err)
		}
		if got != st.want {
			t.Errorf("%s: PinMCP(%q, %q, %q) = %q, want %q", st.name, st.server, st.tool, st.hash, got, st.want)
		}
	}
	got, err := b.MCPPins(ctx, "fs")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"read_file": "h1", "write_file": "w1"}, got); diff != "" {
		t.Errorf("MCPPins(fs) (-want +got):\n%s", diff)
	}
	if got, err := a.MCPPins(ctx, "nobody"); err != nil || len(got) != 0 {
		t.Errorf("MCPPins of a server never seen = %v, %v; want empty", got, err)
	}
}

// testPinAccept: an accept replaces every pin of that server, and only of
// that server; a tool left out is pinned afresh.
func testPinAccept(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	a, b := pinner(t, open()), pinner(t, open())
	for _, tc := range []struct{ server, tool, hash string }{
		{"fs", "read_file", "r1"}, {"fs", "write_file", "w1"}, {"fs", "gone", "g1"}, {"other", "read_file", "o1"},
	} {
		if _, err := a.PinMCP(ctx, tc.server, tc.tool, tc.hash); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AcceptMCP(ctx, "fs", map[string]string{"read_file": "r2", "write_file": "w1"}); err != nil {
		t.Fatalf("AcceptMCP: %v", err)
	}
	if got, _ := a.PinMCP(ctx, "fs", "read_file", "r3"); got != "r2" {
		t.Errorf("after accept, PinMCP(read_file) = %q, want the accepted r2", got)
	}
	if got, _ := a.PinMCP(ctx, "fs", "gone", "g2"); got != "g2" {
		t.Errorf("after accept without it, PinMCP(gone) = %q, want a fresh pin g2", got)
	}
	if got, _ := b.PinMCP(ctx, "other", "read_file", "o2"); got != "o1" {
		t.Errorf("an accept of fs changed other's pin: %q, want o1", got)
	}
	if err := a.AcceptMCP(ctx, "fs", nil); err != nil {
		t.Fatalf("AcceptMCP with no tools: %v", err)
	}
	if got, err := b.MCPPins(ctx, "fs"); err != nil || len(got) != 0 {
		t.Errorf("after accepting no tools, MCPPins(fs) = %v, %v; want empty", got, err)
	}
}

// testPinRace: 16 clients pin different hashes of one tool at once; they
// all get the same pin, and it is one of theirs.
func testPinRace(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	const n = 16
	ps := make([]approval.MCPPinner, n)
	for i := range ps {
		ps[i] = pinner(t, open())
	}
	for round := range 5 {
		tool := fmt.Sprintf("tool-%d", round)
		got := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Go(func() { got[i], errs[i] = p.PinMCP(ctx, "race", tool, fmt.Sprintf("h%d", i)) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d client %d: %v", round, i, errs[i])
			}
			if got[i] != got[0] {
				t.Fatalf("round %d: clients got different pins %q and %q", round, got[0], got[i])
			}
		}
	}
}

// testPinInvalid: empty names and hashes are refused with ErrInvalid and
// record nothing.
func testPinInvalid(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	p := pinner(t, open())
	for _, tc := range []struct{ name, server, tool, hash string }{
		{"no server", "", "t", "h"}, {"no tool", "s", "", "h"}, {"no hash", "s", "t", " "},
	} {
		if _, err := p.PinMCP(ctx, tc.server, tc.tool, tc.hash); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("%s: PinMCP error = %v, want ErrInvalid", tc.name, err)
		}
	}
	if err := p.AcceptMCP(ctx, "", nil); !errors.Is(err, approval.ErrInvalid) {
		t.Errorf("AcceptMCP without a server: %v, want ErrInvalid", err)
	}
	if err := p.AcceptMCP(ctx, "s", map[string]string{"t": ""}); !errors.Is(err, approval.ErrInvalid) {
		t.Errorf("AcceptMCP with an empty hash: %v, want ErrInvalid", err)
	}
	if got, err := p.MCPPins(ctx, "s"); err != nil || len(got) != 0 {
		t.Errorf("after invalid calls MCPPins(s) = %v, %v; want empty", got, err)
	}
}
