package terminal

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/countersign/countersign/adapters"
)

// openPTY opens a pseudo-terminal: the side a terminal emulator holds
// (keys in, screen out) and the side a program reads and writes.
func openPTY(t *testing.T) (emulator, program *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock the pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	size := [4]uint16{24, 80, 0, 0} // rows, columns
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&size))); e != 0 {
		t.Fatalf("set the pty's size: %v", e)
	}
	return m, s
}

// A 6,000-character command pasted at a real prompt (a pseudo-terminal in
// raw mode; the prompt does not turn bracketed paste on, so a terminal
// emulator sends a paste as keys) reaches the bot whole.
func TestPastedLongCommandThroughAPTY(t *testing.T) {
	emu, prog := openPTY(t)
	prompted := make(chan struct{})
	go func() { // the screen: wait for the prompt, which comes once raw mode is on
		seen := []byte{}
		buf := make([]byte, 4096)
		for {
			n, err := emu.Read(buf)
			if seen != nil {
				seen = append(seen, buf[:n]...)
				if strings.Contains(string(seen), "alice> ") {
					close(prompted)
					seen = nil
				}
			}
			if err != nil {
				return
			}
		}
	}()
	term := New(prog, prog, Options{User: "alice", Color: "never"})
	if !term.prompt {
		t.Skip("the pty is not taken for a terminal")
	}
	got := make(chan adapters.Event, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = term.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { got <- e }))
	}()
	select {
	case <-prompted:
	case <-time.After(10 * time.Second):
		t.Fatal("no prompt on the screen")
	}
	command := "!run echo " + strings.Repeat("x", 5963) + " && rm -rf ./data/cache/tmp"
	if _, err := emu.Write([]byte(command + "\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if e.Text != command {
			t.Errorf("the bot got %d bytes ending %q; want the %d pasted, ending %q", len(e.Text), tail(e.Text), len(command), tail(command))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pasted line never reached the bot")
	}
}
