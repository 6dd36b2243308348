package main

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/countersign/countersign/internal/proctest"
)

// The bot is fenced by default: building the app with execute_command on
// (as it is out of the box) makes the process a child subreaper and not
// dumpable, and keep_dumpable leaves it dumpable. Each case runs in a
// fresh test process, since both flags last for the life of the process.
func TestBuildFencesTheProcess(t *testing.T) {
	step := proctest.Child(t, "defaults", "keep dumpable", "no shell tool")
	if step == "" {
		return
	}
	var cfg fileConfig
	cfg.Tools.Root = t.TempDir()
	wantDumpable, wantSubreaper := false, true
	switch step {
	case "defaults":
	case "keep dumpable":
		cfg.Tools.Command.Config.KeepDumpable = true
		wantDumpable = true
	case "no shell tool":
		off := false
		cfg.Tools.Command.Enabled = &off
		wantDumpable, wantSubreaper = true, false
	default:
		t.Fatalf("unknown case %q", step)
	}
	a, err := build(context.Background(), cfg, env{getenv: os.Getenv, logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	a.close()
	if got := proctest.Dumpable(t); got != wantDumpable {
		t.Errorf("dumpable %v, want %v", got, wantDumpable)
	}
	if got := proctest.Subreaper(t); got != wantSubreaper {
		t.Errorf("child subreaper %v, want %v", got, wantSubreaper)
	}
}
