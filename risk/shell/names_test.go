package shell

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCommands(t *testing.T) {
	a := newAnalyzer(t)
	c := func(name string, args ...string) Command { return Command{Name: name, Args: args} }
	tests := []struct {
		name   string
		script string
		want   []Command
		wantOK bool
	}{
		{"plain", "systemctl restart nginx", []Command{c("systemctl", "restart", "nginx")}, true},
		{"path", "/usr/bin/systemctl restart nginx", []Command{c("systemctl", "restart", "nginx")}, true},
		{"quotes removed", `kubectl rollout restart "deploy/api"`, []Command{c("kubectl", "rollout", "restart", "deploy/api")}, true},
		{"sudo and what it runs", "sudo -u root systemctl restart nginx",
			[]Command{c("sudo", "-u", "root", "systemctl", "restart", "nginx"), c("systemctl", "restart", "nginx")}, true},
		{"pipeline and list", "ps aux | grep nginx && service nginx restart",
			[]Command{c("ps", "aux"), c("grep", "nginx"), c("service", "nginx", "restart")}, true},
		{"command substitution", "echo $(service nginx restart)",
			[]Command{c("echo", "$(…)"), c("service", "nginx", "restart")}, true},
		{"sh -c is read", `sh -c 'systemctl restart nginx'`,
			[]Command{c("sh", "-c", "systemctl restart nginx"), c("systemctl", "restart", "nginx")}, true},
		{"bash -lc is read", `bash -lc "rm -f /tmp/x"`,
			[]Command{c("bash", "-lc", "rm -f /tmp/x"), c("rm", "-f", "/tmp/x")}, true},
		{"eval is read", `eval systemctl restart nginx`,
			[]Command{c("eval", "systemctl", "restart", "nginx"), c("systemctl", "restart", "nginx")}, true},
		{"computed name", `$CMD restart nginx`, nil, false},
		{"xargs is not followed", `echo nginx | xargs systemctl restart`,
			[]Command{c("echo", "nginx"), c("xargs", "systemctl", "restart")}, false},
		{"bash script file", `bash deploy.sh`, []Command{c("bash", "deploy.sh")}, false},
		{"does not parse", `systemctl restart 'nginx`, nil, false},
		{"assignment only", `X=1`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := a.Commands(tc.script)
			if ok != tc.wantOK {
				t.Errorf("Commands(%q) ok = %v, want %v", tc.script, ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Commands(%q) (-want +got):\n%s", tc.script, diff)
			}
		})
	}
}
