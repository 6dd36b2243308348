// Package fence is the kernel's fence around a run that no person approved
// (SPEC §8): Landlock keeps the run's writes inside the folders it may
// write (none at all for a run judged read-only), no_new_privs keeps a
// set-user-ID program from gaining privilege, Landlock's signal scope keeps
// it from signalling processes outside the fence, and an empty network
// namespace keeps a run offline.
//
// Landlock and no_new_privs restrict the calling thread and what it starts,
// so each distinct fence gets one OS thread of its own, locked for the life
// of the process and restricted once: a fenced process is started from it
// (On), and inherits the fence from its first instruction, before exec,
// without a launcher in between. The Go runtime never starts a thread from a
// locked one (it asks its template thread), so the bot's other goroutines
// never run restricted. The thread lives as long as the process, so a
// parent-death signal set on a child started from it fires only when the
// bot dies.
package fence

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Spec is what one fenced run may do.
type Spec struct {
	// Write lists the directories the run may write beneath (create,
	// change, remove, rename within). Empty: the run writes nothing, except
	// to the null devices.
	Write []string
	// Offline gives the run a network namespace of its own, with no
	// interface but a loopback that is down: no TCP, UDP, DNS or ICMP
	// reaches anything, not even the bot's own host. Where Landlock can
	// (ABI 4 and later) TCP bind and connect are refused as well.
	Offline bool
}

// key is the thread a spec's runs start from.
func (s Spec) key() string {
	w := slices.Clone(s.Write)
	slices.Sort(w)
	return fmt.Sprintf("%t\x00%s", s.Offline, strings.Join(w, "\x00"))
}

// String describes the fence in words for notes and logs.
func (s Spec) String() string {
	var b strings.Builder
	if len(s.Write) == 0 {
		b.WriteString("no writes")
	} else {
		b.WriteString("writes only beneath " + strings.Join(s.Write, ", "))
	}
	b.WriteString(", no set-user-ID gain")
	if s.Offline {
		b.WriteString(", no network")
	}
	return b.String()
}

// writable are the null devices every fenced run may write to: a
// `2>/dev/null` must not fail.
var writable = []string{"/dev/null", "/dev/zero", "/dev/full"}

// The rights the fence handles: every filesystem right that changes
// something. Reads and execution stay allowed everywhere (the judgement and
// the redaction of outputs cover secrets).
const (
	writeRights = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer |
		ll.AccessFSTruncate
	fileWriteRights = ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// abi is the kernel's Landlock ABI version, asked once.
var abi = sync.OnceValues(func() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0, err
	}
	return v, nil
})

// ErrUnavailable is wrapped by every error that says the kernel cannot
// fence.
var ErrUnavailable = errors.New("the kernel cannot fence runs")

// ErrSetup is wrapped by every error of On: the fence could not be set
// up, and nothing was started.
var ErrSetup = errors.New("the fence could not be set up")

// Probe returns the kernel's Landlock ABI version, or an error wrapping
// ErrUnavailable that says why there is none and what to do.
func Probe() (int, error) {
	v, err := abi()
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: Landlock is not available (%v): it needs Linux 5.13 or later with landlock in the lsm= boot list", ErrUnavailable, err)
	case v < 1:
		return 0, fmt.Errorf("%w: Landlock reports ABI version %d", ErrUnavailable, v)
	}
	return v, nil
}

// config is the Landlock ruleset of a spec on a kernel of ABI version v.
func (s Spec) config(v int) (landlock.Config, []landlock.Rule) {
	fs := landlock.AccessFSSet(writeRights)
	switch {
	case v < 2:
		fs &^= ll.AccessFSRefer | ll.AccessFSTruncate
	case v < 3:
		fs &^= ll.AccessFSTruncate
	}
	c := landlock.Config{HandledAccessFS: fs}
	if s.Offline && v >= 4 {
		c.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if v >= 6 {
		c.Scoped = ll.ScopeSignal
	}
	var rules []landlock.Rule
	if len(s.Write) > 0 {
		rules = append(rules, landlock.PathAccess(fs, s.Write...))
	}
	for _, dev := range writable {
		rules = append(rules, landlock.PathAccess(fs&fileWriteRights, dev).IgnoreIfMissing())
	}
	return c, rules
}

// thread is a locked OS thread restricted by one spec.
type thread struct {
	reqs chan func()
}

var threads struct {
	mu sync.Mutex
	m  map[string]*thread
}

// On runs f on a thread fenced by s and returns when f is done; f starts
// the fenced process (exec.Cmd.Start), after Prepare. It returns an error,
// without running f, when the fence cannot be set up.
func On(s Spec, f func()) error {
	th, err := threadFor(s)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	th.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
	return nil
}

// threadFor returns the thread of s, starting it on first use.
func threadFor(s Spec) (*thread, error) {
	threads.mu.Lock()
	defer threads.mu.Unlock()
	k := s.key()
	if th := threads.m[k]; th != nil {
		return th, nil
	}
	v, err := Probe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	c, rules := s.config(v)
	th := &thread{reqs: make(chan func())}
	ready := make(chan error)
	go func() {
		// Locked and never unlocked: the thread is restricted for good.
		// On failure the goroutine returns still locked, and the runtime
		// ends the thread rather than hand it to another goroutine.
		runtime.LockOSThread()
		if s.Offline && os.Geteuid() == 0 {
			// Root: the thread moves to a network namespace of its own,
			// made once, which every run started from it shares (see
			// Prepare for a bot that is not root).
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				ready <- fmt.Errorf("making the offline runs' network namespace: %w", err)
				return
			}
		}
		if err := restrictThread(c, rules); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for f := range th.reqs {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("%w (%s): %w", ErrSetup, s, err)
	}
	if threads.m == nil {
		threads.m = map[string]*thread{}
	}
	threads.m[k] = th
	return th, nil
}

// restrictThread restricts the calling thread, and all it starts from now
// on: no_new_privs, then the Landlock ruleset.
func restrictThread(c landlock.Config, rules []landlock.Rule) error {
	fd, flags, err := c.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return fmt.Errorf("%w: the Landlock ruleset restricts nothing on this kernel", ErrUnavailable)
	}
	defer syscall.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// Prepare sets what of s acts at the process's creation. A bot running
// as root needs nothing: an offline run starts from a thread that lives in
// an empty network namespace of its own, made once when the thread was
// set up (On), which costs nothing per run; the runs share it, and none
// of them can bring an interface up but a root command (run_as root),
// which then reaches only the other offline runs. A bot that is not root
// may not make one for a thread, so each offline run is cloned into a
// network namespace of its own, inside a user namespace that allows it
// (a few milliseconds a run). That user namespace maps no user: the
// parent would have to write the child's uid_map, which the fenced thread
// may not, and the process keeps its own user on the host's files anyway
// (capabilities in a namespace that maps nobody reach no file). cred is
// the user the process runs as (nil: the bot's own); a bot that is not
// root can only run as itself, so its cred is dropped.
func Prepare(cmd *exec.Cmd, s Spec, cred *syscall.Credential) {
	if !s.Offline || os.Geteuid() == 0 {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER
	if cred != nil && int(cred.Uid) == os.Geteuid() && int(cred.Gid) == os.Getegid() {
		a.Credential = nil // itself: setuid in a namespace that maps nobody fails
	}
}
