package shell

import (
	"encoding/base64"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// absurdCores are absurd commands without quotes of their own, so that
// any carrier below can hold them.
var absurdCores = []string{"rm -rf /", "rm -rf ~", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/nvme0n1",
	"chmod -R 777 /", "wipefs -a /dev/sdb", "rm -rf /usr", "shred /dev/vda",
	// Issue 25, item 7: the disguises rule 1 implies.
	"find / -name x -delete", "find /home -exec rm {} +", "tee /dev/sda", "cp x /dev/nvme0n1", "mkswap /dev/sdb1",
	"mke2fs /dev/vda1", "blkdiscard /dev/sda"}

// carriersOf wraps an absurd command the ways a script hides one: nested,
// carried by another program, piped through a middleman, decoded.
var carriersOf = []func(c string) string{
	func(c string) string { return c },
	func(c string) string { return "sh -c '" + c + "'" },
	func(c string) string { return "echo '" + c + "' | sh" },
	func(c string) string { return "echo '" + c + "' | cat | sudo bash" },
	func(c string) string { return "printf '%s\\n' '" + c + "' | { bash; }" },
	func(c string) string {
		return "echo " + base64.StdEncoding.EncodeToString([]byte(c+"\n")) + " | base64 -d | sh"
	},
	func(c string) string { return "cat <<'EOF' | sh\n" + c + "\nEOF" },
	func(c string) string { return "bash <<< '" + c + "'" },
	func(c string) string { return "vim -c '!" + c + "' -c q x" },
	func(c string) string { return "PAGER='" + c + "' git log" },
	func(c string) string { return "git -c core.pager='" + c + "' log" },
	func(c string) string { return "X='" + c + "'; $X" },
	func(c string) string { return "echo $(" + c + ")" },
	func(c string) string { return "nsenter -t 1 -m " + c },
	func(c string) string { return "timeout 5 nice -n 10 " + c },
	func(c string) string { return "tar -xf a.tar --to-command='" + c + "'" },
	func(c string) string { return "ssh -o ProxyCommand='" + c + "' host" },
	func(c string) string { return "echo '* * * * * " + c + "' | crontab -" },
	func(c string) string { return "awk 'BEGIN { system(\"" + c + "\") }'" },
	func(c string) string { return "find . -name x -exec sh -c '" + c + "' \\;" },

	// Issue 16: spelled through assignments, aliases and functions, and
	// carried into containers, namespaces and other machines.
	func(c string) string { return "f() { \"$@\"; }; f " + c },
	func(c string) string { return "f() { " + c + "; }; f" },
	func(c string) string { return "function g { $1 " + rest(c) + "; }; g " + first(c) },
	func(c string) string { return "alias x='" + c + "'; x" },
	func(c string) string { return "alias x='" + first(c) + "'; x " + rest(c) },
	func(c string) string { return "n=" + first(c) + "; $n " + rest(c) },
	func(c string) string {
		n := first(c)
		return "a=" + n[:1] + "; b=" + n[1:] + "; $a$b " + rest(c)
	},
	func(c string) string {
		n := first(c)
		return "c=" + n[:1] + "; c+=" + n[1:] + "; $c " + rest(c)
	},
	func(c string) string {
		n := first(c)
		return "a=" + n[:1] + "; b=" + n[1:] + "; c=$a$b; \"$c\" " + rest(c)
	},
	func(c string) string {
		w := strings.Fields(c)
		return "T=" + w[len(w)-1] + "; " + strings.Join(w[:len(w)-1], " ") + " \"$T\""
	},
	func(c string) string { return "docker exec api " + c },
	func(c string) string { return "docker run --rm --cpus 2 alpine " + c },
	func(c string) string { return "kubectl exec -n prod api -- " + c },
	func(c string) string { return "ssh host '" + c + "'" },
	func(c string) string { return "chroot /host " + c },
	func(c string) string { return "gcloud compute ssh vm --command '" + c + "'" },
	func(c string) string {
		return "az vm run-command invoke -g rg -n vm --command-id RunShellScript --scripts '" + c + "'"
	},
}

// first and rest split a core into its command name and the rest.
func first(c string) string { n, _, _ := strings.Cut(c, " "); return n }
func rest(c string) string  { _, r, _ := strings.Cut(c, " "); return r }

// FuzzAbsurdAnywhere: a script that holds an absurd command anywhere
// (nested, carried, piped through a middleman) never comes out auto, and
// is blocked: whatever fuzzed script stands before or after it.
func FuzzAbsurdAnywhere(f *testing.F) {
	for _, s := range []string{"ls -la", "git status", "echo $(uptime)", "x=1", "cat <<EOF\nx\nEOF", "if true; then ls; fi", "# c"} {
		f.Add(s, uint8(0), uint8(0), false)
	}
	a := newAnalyzer(f)
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, script string, core, carrier uint8, before bool) {
		if strings.ContainsAny(script, "'\"\\`$") && len(script) > 200 {
			return
		}
		if _, err := parser.Parse(strings.NewReader(script), ""); err != nil {
			return
		}
		hidden := carriersOf[int(carrier)%len(carriersOf)](absurdCores[int(core)%len(absurdCores)])
		combined := script + "\n" + hidden
		if before {
			combined = hidden + "\n" + script
		}
		file, err := parser.Parse(strings.NewReader(combined), "")
		if err != nil || len(file.Stmts) < 1 {
			return
		}
		// The fuzzed part must not swallow the hidden command (an open
		// here-document, a trailing backslash, a comment): the hidden
		// command must parse alone to the same last or first statement.
		alone, err := parser.Parse(strings.NewReader(hidden), "")
		if err != nil {
			t.Fatalf("carrier %q does not parse: %v", hidden, err)
		}
		// Every statement of the hidden part must stand whole at its edge
		// (an alias defined in one statement and used in the next).
		n := len(alone.Stmts)
		if len(file.Stmts) < n {
			return
		}
		edge := file.Stmts[len(file.Stmts)-n:]
		if before {
			edge = file.Stmts[:n]
		}
		for i := range n {
			if !sameShape(edge[i], alone.Stmts[i]) {
				return
			}
		}
		res := a.Analyze(combined)
		checkConsistent(t, combined, res)
		if res.ReadOnly || len(res.Absurd) == 0 {
			t.Fatalf("Analyze(%q) = %+v, want absurd", combined, res)
		}
	})
}

// sameShape compares two statements by their printed form.
func sameShape(a, b *syntax.Stmt) bool {
	var x, y strings.Builder
	p := syntax.NewPrinter()
	if p.Print(&x, a) != nil || p.Print(&y, b) != nil {
		return false
	}
	return x.String() == y.String()
}

// TestAbsurdAnywhere runs every core in every carrier once.
func TestAbsurdAnywhere(t *testing.T) {
	a := newAnalyzer(t)
	for _, core := range absurdCores {
		for i, carry := range carriersOf {
			s := carry(core)
			if res := a.Analyze(s); res.ReadOnly || len(res.Absurd) == 0 {
				t.Errorf("carrier %d: Analyze(%q) = %+v, want absurd", i, s, res)
			}
		}
	}
}
