package helm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/fence"
	"github.com/countersign/countersign/tools/shelltool"
)

// TestFenceUnderChartMounts runs the kernel fence in the scene the chart
// makes: the test binary starts itself again in a user and mount namespace
// of its own ("mounts"), which makes the root filesystem read-only, mounts
// a tmpfs (an emptyDir) at exactly the rendered Deployment's writable
// mounts, and starts the test a third time ("pod") as the image's uid,
// without capabilities and with no_new_privs, as the pod runs. There the
// bot's own config check must accept the rendered configuration with the
// real tools root, and fenced commands must write where the fence allows
// and nowhere else, an offline one included; then, under a seccomp filter
// that refuses clone with namespace flags as the runtime's RuntimeDefault
// profile does, an offline command must not run at all (docs/deploy.md).
func TestFenceUnderChartMounts(t *testing.T) {
	switch os.Getenv(stageEnv) {
	case "mounts":
		os.Exit(mountsStage())
	case "pod":
		podStage(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: mapping the pod's uid 10001 into a user namespace needs root (make test runs as root in CI)")
	}
	if _, err := fence.Probe(); err != nil {
		t.Skipf("skipping: this kernel cannot fence: %v", err)
	}
	r := render(t)
	pod, c := r.pod()
	var writable []string
	for _, m := range c.VolumeMounts {
		if v := pod.volume(m.Name); v != nil && v.EmptyDir != nil && !m.ReadOnly {
			writable = append(writable, m.MountPath)
		}
	}
	if len(writable) == 0 {
		t.Fatal("the Deployment mounts no emptyDir")
	}
	var cfg struct {
		Tools struct{ Root string } `yaml:"tools"`
	}
	if err := yaml.Unmarshal([]byte(r.config()), &cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "countersign.yaml"), []byte(r.config()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := countersign(t)
	if err := os.Link(bin, filepath.Join(dir, "countersign")); err != nil {
		t.Fatal(err)
	}
	// The folder and the test binary are under /tmp, which the scene
	// hides: the stages reach them through descriptors.
	dirFile, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dirFile.Close()
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFenceUnderChartMounts$", "-test.v")
	// As in the pod, TMPDIR is not set: temporary folders go to /tmp.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	cmd.Env = append(env, stageEnv+"=mounts", writableEnv+"="+strings.Join(writable, ":"), rootEnv+"="+cfg.Tools.Root)
	cmd.ExtraFiles = []*os.File{dirFile, exe} // 3 and 4
	uid := imageUID
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: uid, HostID: uid, Size: 1}},
		GidMappingsEnableSetgroups: true,
	}
	out, err := cmd.CombinedOutput()
	t.Logf("the pod's scene (writable: %s):\n%s", strings.Join(writable, ", "), out)
	if err != nil {
		t.Fatalf("the fence under the chart's mounts: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestFenceUnderChartMounts") {
		t.Fatal("the pod stage did not report a pass")
	}
}

// The variables that tell a stage what to do.
const (
	stageEnv    = "COUNTERSIGN_HELM_TEST_STAGE"
	writableEnv = "COUNTERSIGN_HELM_TEST_WRITABLE"
	rootEnv     = "COUNTERSIGN_HELM_TEST_ROOT"
)

// mountsStage, root in its own user and mount namespace, makes the pod's
// filesystem and starts the pod stage in it; it returns the exit code.
func mountsStage() int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "mounts stage: %v\n", err)
		return 1
	}
	if err := readOnlyRoot(); err != nil {
		return fail(err)
	}
	for _, p := range strings.Split(os.Getenv(writableEnv), ":") {
		if err := emptyDir(p); err != nil {
			return fail(err)
		}
	}
	// The pod's process: uid and gid 10001, no capabilities (a process
	// that is not root loses them at exec), no_new_privs
	// (allowPrivilegeEscalation: false), set on the thread that starts it.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(err)
	}
	cmd := exec.Command("/proc/self/fd/4", "-test.run=^TestFenceUnderChartMounts$", "-test.v")
	cmd.Env = append(os.Environ(), stageEnv+"=pod")
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{os.NewFile(3, "dir")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("the pod stage: %w", err))
	}
	return 0
}

// readOnlyRoot makes / read-only in this mount namespace, keeping the
// flags the namespace may not change.
func readOnlyRoot() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for st0, ms := range map[int64]uintptr{
		unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
	} {
		if st.Flags&st0 != 0 {
			flags |= ms
		}
	}
	if err := unix.Mount("", "/", "", flags, ""); err != nil {
		return fmt.Errorf("remounting / read-only: %w", err)
	}
	return nil
}

// emptyDir mounts a tmpfs at p, as the kubelet mounts an emptyDir (mode
// 0777). When p does not exist on this machine (the image's
// /home/countersign), its parent gets a read-only tmpfs of its own that
// holds the mount point.
func emptyDir(p string) error {
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		parent := filepath.Dir(p)
		if err := unix.Mount("tmpfs", parent, "tmpfs", 0, "mode=0755"); err != nil {
			return fmt.Errorf("a tmpfs at %s for the mount point %s: %w", parent, p, err)
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		defer func() { _ = unix.Mount("", parent, "", unix.MS_REMOUNT|unix.MS_RDONLY, "") }()
	}
	if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0777"); err != nil {
		return fmt.Errorf("a tmpfs at %s: %w", p, err)
	}
	return nil
}

// podStage runs as the pod's process does, in the scene mountsStage made.
func podStage(t *testing.T) {
	const dir = "/proc/self/fd/3"
	root := os.Getenv(rootEnv)
	if os.Geteuid() != imageUID {
		t.Fatalf("euid %d, want %d", os.Geteuid(), imageUID)
	}
	if err := os.WriteFile("/etc/countersign-probe", nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("writing under / = %v, want a read-only file system", err)
	}
	for _, p := range strings.Split(os.Getenv(writableEnv), ":") {
		if err := os.WriteFile(filepath.Join(p, "probe"), nil, 0o644); err != nil {
			t.Fatalf("the emptyDir at %s is not writable for the pod's user: %v", p, err)
		}
	}

	// The bot's own check, with the configuration and tools root the pod has.
	// The binary and the configuration are copied to the pod's /tmp first:
	// once the process is fenced (not dumpable) its /proc/self/fd is no
	// longer its own to read.
	bin := t.TempDir()
	for _, f := range []string{"countersign", "countersign.yaml"} {
		b, err := os.ReadFile(dir + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	checkCmd := func() *exec.Cmd {
		c := exec.Command(filepath.Join(bin, "countersign"), "config", "check", "--config", filepath.Join(bin, "countersign.yaml"))
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
		return c
	}
	out, err := checkCmd().CombinedOutput()
	if err != nil {
		t.Fatalf("config check in the pod: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fence: the kernel fences calls that run without a card") {
		t.Errorf("config check does not say the kernel fences runs:\n%s", out)
	}

	if err := shelltool.FenceProcess(false); err != nil {
		t.Fatal(err)
	}
	sh, err := shelltool.New(shelltool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	run := func(command string, by tools.AutoReason) tools.Result {
		raw, _ := json.Marshal(map[string]string{"command": command})
		return sh.Run(t.Context(), raw, tools.RunOptions{AutoRun: true, AutoBy: by})
	}
	for _, tc := range []struct {
		name, command string
		by            tools.AutoReason
		ok            bool
		want          string // in stdout when ok, in the fence's refusal when not
	}{
		{"pre-authorised writes in the root and TMPDIR", `echo root > f && echo tmp > "$TMPDIR/x" && cat f "$TMPDIR/x"`, tools.AutoOperator, true, "root\ntmp"},
		{"pre-authorised: not elsewhere in /tmp", `echo x > /tmp/outside`, tools.AutoOperator, false, "a write to /tmp/outside"},
		{"read-only writes nothing", `echo x > g`, tools.AutoReadOnly, false, "a write to " + root + "/g"},
		{"the model's low writes in the root", `echo low > m && cat m`, tools.AutoModel, true, "low"},
		{"the model's low is offline", fmt.Sprintf(`echo > /dev/tcp/127.0.0.1/%d`, port), tools.AutoModel, false, "network access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(tc.command, tc.by)
			if tc.ok {
				if res.Status != tools.StatusOK || strings.TrimSpace(res.Stdout) != tc.want {
					t.Errorf("%s: %s %q, stderr %q, error %q; want ok %q", tc.command, res.Status, res.Stdout, res.Stderr, res.Error, tc.want)
				}
				return
			}
			if res.Status == tools.StatusOK || !strings.Contains(res.Fence, tc.want) {
				t.Errorf("%s: %s, fence %q, stderr %q; want refused: %s", tc.command, res.Status, res.Fence, res.Stderr, tc.want)
			}
		})
	}

	// Under the runtime's default seccomp rule for clone (a container
	// without CAP_SYS_ADMIN may not make namespaces) an offline run cannot
	// be started, and does not run.
	t.Run("RuntimeDefault seccomp: an offline run does not start", func(t *testing.T) {
		if err := refuseNamespaceClones(); err != nil {
			t.Fatal(err)
		}
		res := run(`echo ran > offline-ran`, tools.AutoModel)
		if res.Status == tools.StatusOK || res.Executed {
			t.Fatalf("an offline run under RuntimeDefault: %s (executed %v), want not started", res.Status, res.Executed)
		}
		if _, err := os.Stat(filepath.Join(root, "offline-ran")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the offline command ran: %v", err)
		}
		t.Logf("what the model is told: %s", res.Error)
		// The bot finds this out at start, so that such calls get a card
		// rather than a start that fails; config check says so.
		if err := fence.ProbeOffline(); !errors.Is(err, fence.ErrNoOffline) {
			t.Errorf("fence.ProbeOffline under RuntimeDefault = %v, want ErrNoOffline", err)
		}
		out, err := checkCmd().CombinedOutput()
		if !strings.Contains(string(out), "cannot keep a command the model alone rated low off the network") {
			t.Errorf("config check under RuntimeDefault: %v, want a warning that low commands get a card:\n%s", err, out)
		}
		if res := run(`cat f`, tools.AutoReadOnly); res.Status != tools.StatusOK {
			t.Errorf("a read-only run under RuntimeDefault: %s %q", res.Status, res.Error)
		}
	})
}

// refuseNamespaceClones installs, on every thread of the process, the
// seccomp rule of the container runtimes' default profile for a container
// without CAP_SYS_ADMIN: clone with a namespace flag fails with EPERM,
// clone3 with ENOSYS (so that callers fall back to clone).
func refuseNamespaceClones() error {
	const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
		unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // the syscall's number
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_CLONE3, Jt: 0, Jf: 1},
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)),
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_CLONE, Jt: 0, Jf: 3},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 16}, // the low half of the flags
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: nsFlags, Jt: 0, Jf: 1},
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)),
		ret(unix.SECCOMP_RET_ALLOW),
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
