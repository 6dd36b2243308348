package shell

import "testing"

// TestMiddlemen: a script reaching a shell through a middleman is still a
// script for a shell: judged when it can be read, eval when it cannot.
func TestMiddlemen(t *testing.T) {
	run(t, []tcase{
		{"echo into sh", "echo 'rm -rf /' | sh", absurd, ""},
		{"echo through cat into bash", "echo 'rm -rf ~' | cat | bash", absurd, ""},
		{"through tee", "echo 'rm -rf /' | tee /dev/null | sh", absurd, ""},
		{"into sudo bash", "echo 'mkfs.ext4 /dev/sda' | sudo -u root bash", absurd, ""},
		{"into busybox sh", "printf 'rm -rf /\\n' | busybox sh", absurd, ""},
		{"into a group", "echo 'rm -rf /' | { bash; }", absurd, ""},
		{"into a subshell", "echo 'rm -rf /' | (sh)", absurd, ""},
		{"from a group", "{ echo 'cd /'; echo 'rm -rf /'; } | sh", absurd, ""},
		{"here-document through cat", "cat <<'EOF' | sh\nrm -rf /\nEOF", absurd, ""},
		{"here-string into bash -s", "bash -s <<< 'dd if=/dev/zero of=/dev/sda'", absurd, ""},
		{"base64 decoded", "echo cm0gLXJmIC8K | base64 -d | sh", absurd, ""},
		{"base64 here-string", "base64 --decode <<< 'cm0gLXJmIC8K' | bash", absurd, ""},
		{"hex decoded", "echo 726d202d7266202f | xxd -r -p | sh", absurd, ""},
		{"reversed", "echo '/ fr- mr' | rev | sh", absurd, ""},
		{"rot13", "echo 'ez -es /' | tr 'a-z' 'n-za-m' | sh", absurd, ""},
		{"printf hex escapes", `printf '\x72\x6d\x20\x2d\x72\x66\x20\x2f' | sh`, absurd, ""},
		{"openssl base64", "echo cm0gLXJmIC8K | openssl base64 -d | sh", absurd, ""},
		{"decrypted", "openssl enc -d -aes-256-cbc -in x.enc -k pw | sh", danger, "cannot see"},
		{"a file through cat", "cat /tmp/x.sh | bash", danger, "cannot see"},
		{"a redirect into bash", "bash < /tmp/x.sh", danger, "cannot see"},
		{"grep into sh", "grep -h cmd *.txt | sh", danger, "cannot see"},
		{"a variable echoed", `echo "$CMD" | sh`, danger, "cannot see"},
		{"a readable harmless script is judged, not run at once", "echo 'uptime' | sh", unknown, "standard input"},
		{"at from a pipe", "echo 'rm -rf /' | at now + 1 minute", absurd, ""},
		{"at from a here-string", "at midnight <<< 'systemctl stop nginx'", danger, "schedules"},
		{"crontab from a pipe", "echo '* * * * * rm -rf /' | crontab -", absurd, ""},
		{"python fork bomb", "python3 -c 'import os\nwhile True: os.fork()'", absurd, "fork bomb"},
		{"perl fork bomb", "perl -e 'fork while fork'", absurd, ""},
		{"ruby fork loop", "ruby -e 'loop { fork }'", absurd, ""},
		{"python os.system", `python3 -c 'import os; os.system("rm -rf /")'`, absurd, ""},
		{"piped python with a system call", `echo 'import os; os.system("rm -rf ~")' | python3`, absurd, ""},
		{"mysql from a dump file", "mysql prod < dump.sql", danger, "cannot be seen"},
		{"unquoted variable split", `X="rm -rf /"; $X`, absurd, ""},
		{"unquoted options split", `opts="-rf /"; rm $opts`, absurd, ""},
		{"braced variable split", `c="kill -9 1"; ${c}`, danger, ""},
		{"quoted variable is one word", `X="rm -rf /"; echo "$X"`, readOnly, ""},
	})
}
