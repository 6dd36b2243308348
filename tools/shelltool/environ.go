package shelltool

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// This file holds what a command runs with: the user (run_as) and the
// environment (BaseEnv, env, set_env).

// credential parses run_as: "uid:gid", "uid" or a user name.
func credential(runAs string) (*syscall.Credential, error) {
	if runAs == "" {
		return nil, nil
	}
	uidText, gidText, hasGID := strings.Cut(runAs, ":")
	if uid, err := strconv.ParseUint(uidText, 10, 32); err == nil {
		gid := uid
		if hasGID {
			if gid, err = strconv.ParseUint(gidText, 10, 32); err != nil {
				return nil, fmt.Errorf("group %q is not a number", gidText)
			}
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	if hasGID {
		return nil, errors.New(`want "uid:gid", "uid" or a user name`)
	}
	u, err := user.Lookup(runAs)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s has a non-numeric id", runAs)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// buildEnv makes the command's whole environment from the allow-list.
func buildEnv(extra []string, set map[string]string, lookup func(string) (string, bool)) ([]string, error) {
	vals := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, name := range append(append([]string(nil), BaseEnv...), extra...) {
		if !validEnvName(name) {
			return nil, fmt.Errorf("env: %q is not a variable name", name)
		}
		if v, ok := lookup(name); ok {
			put(name, v)
		}
	}
	if _, ok := vals["PATH"]; !ok {
		put("PATH", DefaultPath)
	}
	for k, v := range set {
		if !validEnvName(k) {
			return nil, fmt.Errorf("set_env: %q is not a variable name", k)
		}
		if strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("set_env: %s holds a NUL byte", k)
		}
		put(k, v)
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env, nil
}

// validEnvName reports whether s is a portable variable name: letters,
// digits and underscores, not starting with a digit.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Unprivileged is the user a bot running as root runs commands as when
// run_as is empty (see RootDefault).
const Unprivileged = "nobody"

// unprivilegedID is Unprivileged's uid and gid where no such user exists.
const unprivilegedID = "65534:65534"

// RootDefault is the run_as to use for a bot whose effective uid is euid
// and whose configuration says runAs. A bot running as root with no run_as
// runs its commands as Unprivileged (65534:65534 where the system has no
// such user): as root, a command could read the bot's environment and
// memory under /proc whatever else is done (root passes the dumpable
// check), and its configuration file. Any other case keeps runAs; to run
// commands as root knowingly, set run_as to root.
func RootDefault(runAs string, euid int) string {
	if runAs != "" || euid != 0 {
		return runAs
	}
	if _, err := user.Lookup(Unprivileged); err != nil {
		return unprivilegedID
	}
	return Unprivileged
}

// ParseRunAs parses a run_as setting ("uid:gid", "uid" or a user name)
// into the credential a process is started with; "" is nil, the bot's own
// user. MCP stdio servers run as the command tool's user through it.
func ParseRunAs(runAs string) (*syscall.Credential, error) { return credential(runAs) }
