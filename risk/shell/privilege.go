package shell

import (
	"strings"

	"github.com/countersign/countersign/risk/sensitive"
)

// Privilege and persistence (issue 16, mechanism 5): setuid and setgid
// bits however given, preload variables, the service manager's global
// environment, a crontab installed from a file, links and copies planted
// where code runs later. Each is a danger whatever the model says.

const (
	effSetuid  = "sets a setuid or setgid bit, which lets anyone run the file with its owner's privileges"
	effPreload = "preloads a library into programs, which runs its code inside them"
	effGlobEnv = "changes the environment of every service the service manager starts"
	effCron    = "installs a crontab, which runs its commands on a schedule"
)

// preloadVars make the loader run code in every program started.
var preloadVars = map[string]bool{"LD_PRELOAD": true, "LD_AUDIT": true, "LD_LIBRARY_PATH": true,
	"DYLD_INSERT_LIBRARIES": true, "DYLD_LIBRARY_PATH": true}

// setuidMode reports whether a chmod or install mode sets the setuid or
// setgid bit: u+s, g+s, +s, a+s, ug=rwxs, 4755, 2755, 6755, 04755.
func setuidMode(m string) bool {
	if m == "" {
		return false
	}
	if isOctal(m) {
		n := len(m)
		if n < 4 {
			return false
		}
		d := m[n-4]
		return d == '2' || d == '3' || d == '4' || d == '5' || d == '6' || d == '7'
	}
	for _, clause := range strings.Split(m, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		who := clause[:i]
		if strings.ContainsRune(clause[i+1:], 's') && (who == "" || strings.ContainsAny(who, "uga")) {
			return true
		}
	}
	return false
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return s != ""
}

// privilegeBits records a danger for chmod and install given a setuid or
// setgid mode; it reports whether it did.
func (j *judge) privilegeBits(name string, args []arg) bool {
	switch name {
	case "chmod":
		for _, a := range args {
			t := a.text
			if strings.HasPrefix(t, "--") {
				continue
			}
			// chmod -s is a removal; chmod u+s and 4755 are modes.
			if setuidMode(t) && !strings.HasPrefix(t, "-") {
				j.danger("chmod " + t + " " + effSetuid)
				return true
			}
		}
	case "install":
		for i, a := range args {
			m := ""
			switch {
			case a.text == "-m" || a.text == "--mode":
				if i+1 < len(args) {
					m = args[i+1].text
				}
			case strings.HasPrefix(a.text, "--mode="):
				m = strings.TrimPrefix(a.text, "--mode=")
			case strings.HasPrefix(a.text, "-m") && len(a.text) > 2:
				m = a.text[2:]
			}
			if setuidMode(m) {
				j.danger("install -m " + m + " " + effSetuid)
				return true
			}
		}
	}
	return false
}

// plantsLater records a danger for ln, cp, mv, install, tee and the like
// whose destination is a place where code runs later (/etc/cron.d,
// ~/.bashrc, /etc/ld.so.preload, .git/hooks/); it reports whether it did.
func (j *judge) plantsLater(name string, args []arg) bool {
	switch name {
	case "ln", "cp", "mv", "install", "rsync", "scp", "link", "dd":
	default:
		return false
	}
	for _, a := range args {
		t := a.text
		if name == "dd" {
			var ok bool
			if t, ok = strings.CutPrefix(t, "of="); !ok {
				continue
			}
		}
		if strings.HasPrefix(t, "-") || a.dynamic {
			continue
		}
		if why, ok := sensitive.RunsLater(t); ok {
			j.danger(name + " " + t + ": " + why)
			return true
		}
	}
	return false
}

// exportsPreload records a danger for an assignment to a preload
// variable, as a prefix (LD_PRELOAD=x.so ls) or on its own.
func (j *judge) exportsPreload(n string) bool {
	if preloadVars[n] {
		j.danger("sets " + n + ", which " + effPreload)
		return true
	}
	return false
}
