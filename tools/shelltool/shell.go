// Package shelltool is the execute_command tool: it runs a command line with
// `bash -c` in a configured root, fenced on its own whatever the assessor
// decided (SPEC §8): a scrubbed environment, standard input closed, a time
// limit that kills the whole process group, and output capped with a note.
// Two fences act on the whole bot process, so they are not set up by New
// but by FenceProcess, which main calls once: a child subreaper that lets
// the time limit reach what a command left outside its process group, and
// a process that is not dumpable, so a command cannot read the bot's
// environment. The package also previews the files a delete-like command
// would touch (SPEC §5) without running anything.
package shelltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/fence"
)

// Name is the tool name the LLM calls.
const Name = "execute_command"

// Defaults for the Config fields left zero.
const (
	DefaultTimeout          = 60 * time.Second
	DefaultMaxTimeout       = 10 * time.Minute
	DefaultOutputLimit      = 64 << 10
	DefaultProgressInterval = 2 * time.Second
	DefaultPreviewLimit     = 50
	DefaultShell            = "bash"
	// DefaultPath is PATH for the command when the bot itself has none.
	DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// BaseEnv lists the variables always passed through from the bot's
// environment when set. Nothing else is, unless Config.Env names it.
var BaseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TERM"}

// Config is the execute_command section of the configuration.
type Config struct {
	// Root is the directory commands run in; workdir is relative to it.
	// Required.
	Root string `yaml:"root"`
	// Shell is the bash binary, found on PATH when not absolute. Default "bash".
	Shell string `yaml:"shell"`
	// Timeout is the time limit when the call gives none. Default 60s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxTimeout caps timeout_seconds. Default 10m; at least Timeout.
	MaxTimeout time.Duration `yaml:"max_timeout"`
	// OutputLimit is how many bytes of stdout, and of stderr, are kept.
	// Default 64 KiB each.
	OutputLimit int `yaml:"output_limit"`
	// Env names further variables passed through from the bot's
	// environment (besides BaseEnv).
	Env []string `yaml:"env"`
	// SetEnv sets variables to fixed values for every command.
	SetEnv map[string]string `yaml:"set_env"`
	// ProgressInterval is how often a long run reports progress. Default 2s.
	ProgressInterval time.Duration `yaml:"progress_interval"`
	// PreviewLimit caps how many paths a preview lists. Default 50.
	PreviewLimit int `yaml:"preview_limit"`
	// RunAs runs commands as another user: "uid:gid", "uid" or a user
	// name. Empty: the bot's own user, except that the countersign binary
	// running as root makes it Unprivileged ("nobody", see RootDefault):
	// a root command can read the bot's memory, environment and
	// configuration whatever else is done. "root" runs commands as root
	// knowingly.
	RunAs string `yaml:"run_as"`
	// KeepDumpable leaves the bot process dumpable. By default
	// FenceProcess marks the process not dumpable (prctl PR_SET_DUMPABLE
	// 0), so a command running as the bot's own user cannot read the bot's
	// environment, and the secrets in it, through /proc/<pid>/environ.
	// This is process-wide: it also turns off core dumps.
	KeepDumpable bool `yaml:"keep_dumpable"`
	// Fence is the kernel's fence around calls that run without a card
	// (SPEC §8; fenced.go).
	Fence FenceConfig `yaml:"fence"`
}

// Tool is the execute_command tool. It is safe for concurrent use.
type Tool struct {
	cfg   Config
	root  string // absolute, symlinks resolved
	shell string
	env   []string
	cred  *syscall.Credential // nil: the bot's own user
	tmp   string              // where fenced runs get their temporary folders; "" with fence.mode off
}

var (
	_ tools.Tool      = (*Tool)(nil)
	_ tools.Previewer = (*Tool)(nil)
)

// WithDefaults returns c with its zero fields filled in, as New applies
// them; a negative limit, or a max_timeout below timeout, is an error
// naming the key.
func (c Config) WithDefaults() (Config, error) {
	if c.Shell == "" {
		c.Shell = DefaultShell
	}
	if err := tools.Limit("timeout", &c.Timeout, DefaultTimeout); err != nil {
		return c, err
	}
	var err error
	if err = errors.Join(
		tools.Limit("max_timeout", &c.MaxTimeout, max(DefaultMaxTimeout, c.Timeout)),
		tools.Limit("output_limit", &c.OutputLimit, DefaultOutputLimit),
		tools.Limit("progress_interval", &c.ProgressInterval, DefaultProgressInterval),
		tools.Limit("preview_limit", &c.PreviewLimit, DefaultPreviewLimit),
	); err != nil {
		return c, err
	}
	if c.Fence, err = c.Fence.withDefaults(); err != nil {
		return c, err
	}
	if c.MaxTimeout < c.Timeout {
		return c, fmt.Errorf("max_timeout %v is below timeout %v", c.MaxTimeout, c.Timeout)
	}
	return c, nil
}

// New checks cfg, fills in defaults and snapshots the allowed environment.
// It changes nothing process-wide: see FenceProcess, which main calls first.
// Errors name the key in the tool's section; the caller names the section.
func New(cfg Config) (*Tool, error) {
	if cfg.Root == "" {
		return nil, errors.New("root is required")
	}
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", cfg.Root, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", cfg.Root, err)
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("root %q: %w", cfg.Root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("root %q is not a directory", cfg.Root)
	}
	cfg, err = cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	shell, err := exec.LookPath(cfg.Shell)
	if err != nil {
		return nil, fmt.Errorf("shell %q: %w", cfg.Shell, err)
	}
	env, err := buildEnv(cfg.Env, cfg.SetEnv, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	cred, err := credential(cfg.RunAs)
	if err != nil {
		return nil, fmt.Errorf("run_as %q: %w", cfg.RunAs, err)
	}
	t := &Tool{cfg: cfg, root: root, shell: shell, env: env, cred: cred}
	if cfg.Fence.Mode != FenceOff {
		if t.tmp, err = fenceTemp(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Run implements tools.Tool.
func (t *Tool) Run(ctx context.Context, raw json.RawMessage, opts tools.RunOptions) tools.Result {
	start := time.Now()
	res := t.run(ctx, raw, opts, start)
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

// args are the arguments of execute_command (SPEC §1). risk_level is read by
// the assessor; tools.DecodeArgs accepts and ignores it.
type args struct {
	Command        string   `json:"command"`
	Workdir        string   `json:"workdir"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

// call is a checked call, ready to run.
type call struct {
	command string
	dir     string
	timeout time.Duration
	note    string
}

// check decodes and validates the arguments. A non-nil result is the
// refusal to return instead of running.
func (t *Tool) check(raw json.RawMessage) (call, *tools.Result) {
	var a args
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return call{}, invalid(err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return call{}, invalid(tools.MissingArg("command"))
	}
	if strings.ContainsRune(a.Command, 0) {
		return call{}, invalid(&tools.ArgError{Arg: "command", Problem: "holds a NUL byte"})
	}
	c := call{command: a.Command, timeout: t.cfg.Timeout}
	if a.TimeoutSeconds != nil {
		s := *a.TimeoutSeconds
		if !(s > 0) || math.IsInf(s, 0) {
			return call{}, invalid(&tools.ArgError{Arg: "timeout_seconds", Problem: "must be a positive number of seconds"})
		}
		if ns := s * float64(time.Second); ns < float64(t.cfg.MaxTimeout) {
			c.timeout = time.Duration(ns)
		} else {
			c.timeout = t.cfg.MaxTimeout
			c.note = fmt.Sprintf("timeout_seconds %g was capped at %v", s, t.cfg.MaxTimeout)
		}
	}
	dir, deny, err := t.resolveDir(a.Workdir)
	if deny != "" {
		r := tools.Denied(errors.New(deny))
		return call{}, &r
	}
	if err != nil {
		return call{}, invalid(err)
	}
	c.dir = dir
	return c, nil
}

// invalid is the refusal of arguments that name what is wrong with them.
func invalid(err error) *tools.Result {
	r := tools.InvalidArgs(err)
	return &r
}

// resolveDir maps workdir onto a directory inside the root, following
// symbolic links. deny is set when the directory is outside the root.
func (t *Tool) resolveDir(workdir string) (dir, deny string, err error) {
	if workdir == "" {
		return t.root, "", nil
	}
	if strings.ContainsRune(workdir, 0) {
		return "", "", &tools.ArgError{Arg: "workdir", Problem: "holds a NUL byte"}
	}
	if filepath.IsAbs(workdir) {
		return "", fmt.Sprintf("workdir %q is absolute; it must be a path relative to the working root", workdir), nil
	}
	if !filepath.IsLocal(workdir) && filepath.Clean(workdir) != "." {
		return "", fmt.Sprintf("workdir %q leaves the working root", workdir), nil
	}
	real, err := filepath.EvalSymlinks(filepath.Join(t.root, workdir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", &tools.ArgError{Arg: "workdir", Problem: fmt.Sprintf("%q does not exist", workdir)}
		}
		return "", "", fmt.Errorf("workdir %q: %w", workdir, err)
	}
	if rel, err := filepath.Rel(t.root, real); err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return "", fmt.Sprintf("workdir %q leads outside the working root through a symbolic link", workdir), nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", "", fmt.Errorf("workdir %q: %w", workdir, err)
	}
	if !fi.IsDir() {
		return "", "", &tools.ArgError{Arg: "workdir", Problem: fmt.Sprintf("%q is not a directory", workdir)}
	}
	return real, "", nil
}

func (t *Tool) run(ctx context.Context, raw json.RawMessage, opts tools.RunOptions, start time.Time) tools.Result {
	c, bad := t.check(raw)
	if bad != nil {
		return *bad
	}
	if err := ctx.Err(); err != nil {
		return tools.NotStarted(errors.New("the run was stopped before it started"))
	}

	stdout := tools.NewCappedBuffer(t.cfg.OutputLimit)
	stderr := tools.NewCappedBuffer(t.cfg.OutputLimit)
	tail := newTail(tailBytes)
	outR, outW, err := os.Pipe()
	if err != nil {
		return tools.NotStarted(fmt.Errorf("could not start the command: %w", err))
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return tools.NotStarted(fmt.Errorf("could not start the command: %w", err))
	}

	// The kernel's fence, and the private temporary folder of a run that
	// may write.
	env, spawn := t.env, (func(func()) error)(nil)
	spec := t.spec(opts)
	if spec != nil {
		if len(spec.Write) > 0 {
			dir, remove, err := t.runTemp(t.cred)
			if err != nil {
				closeAll(outR, outW, errR, errW)
				return tools.NotStarted(fmt.Errorf("could not start the command: %w", err))
			}
			defer remove()
			env = withEnv(env, "TMPDIR", dir)
		}
		spawn = func(f func()) error { return fence.On(*spec, f) }
	}

	runCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, t.shell, "-c", c.command)
	cmd.Dir = c.dir
	cmd.Env = env
	cmd.Stdin = nil // the null device
	cmd.Stdout = outW
	cmd.Stderr = errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: t.credential()}
	if spec != nil {
		fence.Prepare(cmd, *spec, cmd.SysProcAttr.Credential)
	}
	// The group is the guard's, set by children.start before the start.
	cmd.Cancel = func() error { return killGroup(cmd.SysProcAttr.Pgid) }

	g, err := children.start(cmd, t.shell, t.cred, spawn)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if spec != nil && errors.Is(err, fence.ErrSetup) {
			return notFenced(err)
		}
		if t.cred != nil && errors.Is(err, syscall.EACCES) {
			return tools.NotStarted(fmt.Errorf("could not start the command as %s (uid %d), who may not enter %s or run %s: "+
				"give that user the folder, or set run_as to one who may: %w", t.runAs(), t.cred.Uid, c.dir, t.shell, err))
		}
		return tools.NotStarted(fmt.Errorf("could not start the command: %w", err))
	}
	pgid := g.Process.Pid

	var readers sync.WaitGroup
	readers.Go(func() { copyPipe(outR, stdout, tail) })
	readers.Go(func() { copyPipe(errR, stderr, tail) })

	stopProgress := reportProgress(opts.Progress, t.cfg.ProgressInterval, start, tail)

	waitErr := cmd.Wait()
	// The run is over: whatever it left behind in its process group goes too,
	// and so does what left the group (setsid, job control), so nothing
	// outlives the call or keeps the output pipes open.
	_ = killGroup(pgid)
	_ = g.Wait()
	children.finish(cmd.Process.Pid, pgid)
	// Should anything still hold a pipe (a leftover stuck in the kernel),
	// give it a moment, then stop reading.
	deadline := time.Now().Add(drainGrace)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	readers.Wait()
	outR.Close()
	errR.Close()
	stopProgress()

	res := t.result(ctx, runCtx, c, cmd.ProcessState, waitErr, stdout, stderr, time.Now().After(deadline))
	res.Fenced = spec != nil
	if res.Status == tools.StatusError {
		if res.Fence = fenceRefused(res.Stderr, spec, c.dir, opts); res.Fence != "" {
			res.Error += "; " + res.Fence
		}
	}
	return res
}

// credential is a copy of the user commands run as, for one start (the
// fence may change how groups are set).
func (t *Tool) credential() *syscall.Credential {
	if t.cred == nil {
		return nil
	}
	c := *t.cred
	return &c
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// reportProgress calls report every interval with the time since start
// and the output's tail, until the returned stop is called; stop returns
// once no report is running. A nil report does nothing.
func reportProgress(report func(tools.Progress), interval time.Duration, start time.Time, tail *tailBuffer) (stop func()) {
	if report == nil || interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				report(tools.Progress{ElapsedMS: time.Since(start).Milliseconds(), Tail: tail.String()})
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

const (
	tailBytes  = 2 << 10
	drainGrace = time.Second
)

func copyPipe(r *os.File, keep *tools.CappedBuffer, tail *tailBuffer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			keep.Write(buf[:n])
			tail.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (t *Tool) result(ctx, runCtx context.Context, c call, ps *os.ProcessState, waitErr error,
	stdout, stderr *tools.CappedBuffer, abandoned bool) tools.Result {
	res := tools.Result{
		Executed:  true,
		Stdout:    stdout.String(),
		Stderr:    stderr.String(),
		Truncated: stdout.Truncated() || stderr.Truncated(),
	}
	notes := []string{c.note, stdout.Note("stdout"), stderr.Note("stderr")}
	if abandoned {
		notes = append(notes, "a process that left the command's process group kept the output open; reading stopped")
	}
	if ps == nil {
		res.Status = tools.StatusError
		res.Error = fmt.Sprintf("waiting for the command: %v", waitErr)
		res.Note = tools.JoinNotes(notes...)
		return res
	}
	code := ps.ExitCode()
	var signal string
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
		signal = signalName(ws.Signal())
	}
	res.ExitCode = &code
	switch {
	case signal != "" && forcedQuit.Load():
		res.Status = tools.StatusError
		res.Error = "the bot was forced to quit before the run finished; the command and every process it started were killed"
	case ctx.Err() != nil:
		res.Status = tools.StatusError
		res.Error = "the run was stopped before it finished; the command and every process it started were killed"
	case runCtx.Err() != nil:
		res.Status = tools.StatusError
		res.Error = fmt.Sprintf("the command timed out after %v; it and every process it started were killed", c.timeout)
	case signal != "":
		res.Status = tools.StatusError
		res.Error = fmt.Sprintf("the command was killed by %s", signal)
	case code != 0:
		res.Status = tools.StatusError
		res.Error = fmt.Sprintf("the command exited with status %d", code)
	default:
		res.Status = tools.StatusOK
	}
	if signal != "" {
		res.Data, _ = json.Marshal(map[string]string{"signal": signal})
	}
	res.Note = tools.JoinNotes(notes...)
	return res
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return fmt.Sprintf("signal %d (%v)", int(s), s)
}

// runAs names the user commands run as, for messages.
func (t *Tool) runAs() string {
	if t.cfg.RunAs == "" {
		return "the bot's user"
	}
	return t.cfg.RunAs
}

// Config returns the configuration the tool runs with, defaults filled in.
func (t *Tool) Config() Config { return t.cfg }
