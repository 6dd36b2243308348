package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestNoLibraryNoise: with Redis unreachable, the only thing on standard
// error is the error itself. The Redis client's default logger writes to
// the process's file descriptor 2, not to the writer run is given, so the
// test catches descriptor 2.
func TestNoLibraryNoise(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "redis://127.0.0.1:1/0")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Chdir(t.TempDir())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(w.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	leakedc := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		leakedc <- b
	}()
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"run"}, strings.NewReader(""), &stdout, &stderr)
	if err := syscall.Dup3(saved, 2, 0); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Close(saved)
	_ = w.Close()
	leaked := <-leakedc
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if len(leaked) > 0 {
		t.Errorf("a library wrote to standard error:\n%s", leaked)
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "cannot reach redis") {
		t.Errorf("standard error = %q, want the one error line", stderr.String())
	}
}
