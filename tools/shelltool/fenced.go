package shelltool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/fence"
)

// This file chooses the kernel's fence around a run (SPEC §8, package
// fence) from why it runs without a card, makes its private temporary
// folder, and words what the fence refused.

// The fence modes (FenceConfig.Mode).
const (
	FenceAuto = "auto" // fence every call that runs without a card (default)
	FenceAll  = "all"  // also approved calls, as approved: true does
	FenceOff  = "off"  // no kernel fence
)

// FenceConfig is tools.execute_command.fence.
type FenceConfig struct {
	// Mode is auto (default): calls that run without a card run fenced;
	// all: approved calls too; off: none.
	Mode string `yaml:"mode"`
	// Network, for a call run on the model's word alone: deny (default)
	// keeps it off the network; allow lets it reach it.
	Network string `yaml:"network"`
	// Approved fences approved calls as well (writes in the root and the
	// run's temporary folder, no set-user-ID gain; network as usual).
	Approved bool `yaml:"approved"`
}

// withDefaults fills in and checks the fence section.
func (f FenceConfig) withDefaults() (FenceConfig, error) {
	switch f.Mode {
	case "":
		f.Mode = FenceAuto
	case FenceAuto, FenceAll, FenceOff:
	default:
		return f, fmt.Errorf("fence.mode %q: want auto, all or off", f.Mode)
	}
	switch f.Network {
	case "":
		f.Network = "deny"
	case "deny", "allow":
	default:
		return f, fmt.Errorf("fence.network %q: want deny or allow", f.Network)
	}
	if f.Mode == FenceAll {
		f.Approved = true
	}
	return f, nil
}

// spec returns the fence of a run, or nil for an unfenced one.
func (t *Tool) spec(opts tools.RunOptions) *fence.Spec {
	f := t.cfg.Fence
	if f.Mode == FenceOff {
		return nil
	}
	writes := []string{t.root, t.tmp}
	switch {
	case opts.AutoBy == "" && !opts.AutoRun:
		if !f.Approved {
			return nil
		}
		return &fence.Spec{Write: writes}
	case opts.AutoBy == tools.AutoReadOnly:
		return &fence.Spec{}
	case opts.AutoBy == tools.AutoOperator:
		return &fence.Spec{Write: writes}
	case opts.AutoBy == tools.AutoModel:
		return &fence.Spec{Write: writes, Offline: f.Network != "allow"}
	}
	// An auto-run whose reason is unknown gets the tightest fence.
	return &fence.Spec{Offline: true}
}

// fenceTemp is the folder every fenced run's temporary folder lives in,
// one per process: the bot's own, traversable by the user commands run
// as, who owns nothing in it but the folders of its runs.
var fenceTemp = sync.OnceValues(makeTemp)

func makeTemp() (string, error) {
	dir, err := os.MkdirTemp("", "countersign-fence-")
	if err != nil {
		return "", fmt.Errorf("making the fenced runs' temporary folder: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return "", fmt.Errorf("making the fenced runs' temporary folder: %w", err)
	}
	return filepath.EvalSymlinks(dir)
}

// runTemp makes a run's private temporary folder, owned by cred's user,
// and returns it with the function that removes it.
func (t *Tool) runTemp(cred *syscall.Credential) (string, func(), error) {
	dir, err := os.MkdirTemp(t.tmp, "run-")
	if err != nil {
		return "", nil, fmt.Errorf("making the run's temporary folder: %w", err)
	}
	remove := func() { _ = os.RemoveAll(dir) }
	if cred != nil && int(cred.Uid) != os.Geteuid() {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			remove()
			return "", nil, fmt.Errorf("giving the run's temporary folder to uid %d: %w", cred.Uid, err)
		}
	}
	return dir, remove, nil
}

// withEnv returns env with name set to value.
func withEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// why words why a call ran fenced.
func why(opts tools.RunOptions) string {
	switch opts.AutoBy {
	case tools.AutoReadOnly:
		return "it was judged read-only, so it may write nothing"
	case tools.AutoOperator:
		return "it ran on an operator's pre-authorisation"
	case tools.AutoModel:
		return "it ran on your risk_level low alone"
	case "":
		if !opts.AutoRun {
			return "the operator fences approved calls too"
		}
	}
	return "it ran without a person's approval"
}

// fenceRefused words what the fence s refused a run in dir, or "".
func fenceRefused(stderr string, s *fence.Spec, dir string, opts tools.RunOptions) string {
	if s == nil {
		return ""
	}
	r := fence.Refusals(stderr, *s, dir)
	if len(r) == 0 {
		return ""
	}
	return fmt.Sprintf("the fence refused %s: this call ran fenced by the kernel because %s (%s); "+
		"ask with risk_level high to run it unfenced with a person's approval",
		strings.Join(r, ", "), why(opts), s)
}

// notFenced is the refusal of a run the kernel cannot fence: it does not
// run unfenced without a person's approval.
func notFenced(err error) tools.Result {
	msg := "the kernel could not fence this call, which would have run without a person's approval, so it did not run"
	if errors.Is(err, fence.ErrUnavailable) {
		msg = "this host's kernel cannot fence calls that run without a person's approval, so it did not run"
	}
	r := tools.NotStarted(fmt.Errorf("%s (%v); ask with risk_level high to run it with a person's approval", msg, err))
	r.Fence = msg + "; ask with risk_level high to run it with a person's approval"
	return r
}
