package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRunPipedLinesAllAnswered: 100 lines piped at once are each answered,
// in order, and none is turned away by the conversation's queue (issue 12:
// 68 of 100 were refused).
func TestRunPipedLinesAllAnswered(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Chdir(t.TempDir())
	var input strings.Builder
	for i := range 100 {
		fmt.Fprintf(&input, "!run echo line-%d\n", i)
	}
	out := &syncBuffer{}
	if err := run(context.Background(), "", strings.NewReader(input.String()), out, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	if strings.Contains(out.String(), "still working on your earlier messages") {
		t.Fatalf("piped lines were turned away:\n%s", out)
	}
	answers := regexp.MustCompile(`(?m)^    line-(\d+)$`).FindAllStringSubmatch(out.String(), -1)
	if len(answers) != 100 {
		t.Fatalf("%d answers, want 100:\n%s", len(answers), out)
	}
	for i, a := range answers {
		if a[1] != strconv.Itoa(i) {
			t.Fatalf("answer %d is to line %s: out of order\n%s", i, a[1], out)
		}
	}
}

// TestRunRoot: --root sets where the command and file tools work, so the
// quick start works from any folder.
func TestRunRoot(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	// A folder every user may enter, not t.TempDir (0700 in a 0700 folder):
	// a test run as root runs its commands as nobody.
	root, err := os.MkdirTemp("", "countersign-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "only-in-root.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var out, errOut syncBuffer
	code := dispatch([]string{"--root", root}, strings.NewReader("!run ls\n"), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "only-in-root.txt") || !strings.Contains(out.String(), "root: "+root) {
		t.Errorf("--root %s was not where !run ls ran:\n%s", root, out.String())
	}

	missing := filepath.Join(root, "no-such-folder")
	code = dispatch([]string{"run", "--root", missing}, strings.NewReader(""), &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "no-such-folder") {
		t.Errorf("--root of a missing folder: exit %d, stderr %q; want 1 and the folder named", code, errOut.String())
	}
}
