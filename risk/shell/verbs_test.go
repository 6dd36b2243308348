package shell

import (
	"strings"
	"testing"
)

// TestReaderSamples runs every sample a reader row carries: what it must
// accept comes out read-only, what it must refuse does not.
func TestReaderSamples(t *testing.T) {
	a := newAnalyzer(t)
	for name, rd := range readers() {
		if rd.verbs != nil && len(rd.accept) == 0 {
			t.Errorf("reader %s has verbs but no sample to accept", name)
		}
		if rd.verbs != nil && len(rd.refuse) == 0 {
			t.Errorf("reader %s has verbs but no sample to refuse", name)
		}
		for _, s := range rd.accept {
			if res := a.Analyze(s); !res.ReadOnly {
				t.Errorf("%s: sample %q must be read-only: %+v", name, s, res)
			}
		}
		for _, s := range rd.refuse {
			if res := a.Analyze(s); res.ReadOnly {
				t.Errorf("%s: sample %q must not be read-only", name, s)
			}
		}
	}
}

// generatedVerbs are the destructive verbs the generated refusals put
// after every verb group of every row.
var generatedVerbs = []string{"delete", "rm", "remove", "purge", "drop", "destroy", "set", "out", "repair",
	"stop", "kill", "apply", "patch", "reset", "restart", "create", "update", "edit", "import", "flush", "wipe",
	"disable", "down", "replace", "rename", "add", "move", "mv", "write", "put", "exec", "run"}

// TestGeneratedRefusals: a row's verb groups followed by a destructive
// verb never come out read-only (ceph osd pool delete, ceph osd rm 3).
func TestGeneratedRefusals(t *testing.T) {
	a := newAnalyzer(t)
	n := 0
	for name, rd := range readers() {
		var groups []string
		if rd.verbs != nil {
			rd.verbs.groups(func(g string) { groups = append(groups, g) })
		}
		groups = append(groups, rd.groups...)
		for _, g := range groups {
			for _, v := range generatedVerbs {
				script := strings.Join(strings.Fields(name+" "+g+" "+v+" x"), " ")
				n++
				if res := a.Analyze(script); res.ReadOnly {
					t.Errorf("%q is read-only: the %q group of %s followed by %s", script, g, name, v)
				}
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d generated refusals: the rows lost their verbs", n)
	}
	t.Logf("%d generated refusals", n)
}

// TestVerbLexicon: unknown CLIs whose leading subcommand words hold a
// destructive verb are on the floor; looks never are.
func TestVerbLexicon(t *testing.T) {
	run(t, []tcase{
		{"unknown cluster destroy", "foo cluster destroy", danger, "destructive verb"},
		{"invoke-rc.d stop", "invoke-rc.d nginx stop", danger, "destructive verb"},
		{"script stop", "./deploy.sh api stop", danger, "destructive verb"},
		{"compound verb", "mycli bucket delete-all", danger, "destructive verb"},
		{"underscore verb", "ctl vol_remove x", danger, "destructive verb"},
		{"upper case", "foo DROP db", danger, "destructive verb"},
		{"ceph pool delete", "ceph osd pool delete p p --yes-i-really-really-mean-it", danger, "destructive verb"},
		{"ceph osd rm", "ceph osd rm 3", danger, "destructive verb"},
		{"ceph osd out", "ceph osd out 3", danger, "destructive verb"},
		{"ceph osd purge", "ceph osd purge 3 --yes-i-really-mean-it", danger, "destructive verb"},
		{"sudo unknown stop", "sudo -u app appctl stop", danger, ""},
		{"unknown get", "foo cluster get x", unknown, "unknown command"},
		{"unknown list", "foo list", unknown, "unknown command"},
		{"unknown status", "foo status", unknown, "unknown command"},
		{"unknown describe", "foo describe stop-words", unknown, "unknown command"},
		{"verb after option", "foo --name stop", unknown, "unknown command"},
		{"path is not a verb", "foo /tmp/delete", unknown, "unknown command"},
		{"ceph set", "ceph osd pool set rbd size 1", danger, "destructive verb"},
		{"ceph auth get", "ceph auth get client.admin", danger, ""},
		{"ceph osd set", "ceph osd set noout", danger, "destructive verb"},
		{"ceph tell", "ceph tell osd.* injectargs --x", danger, ""},
		{"ceph rename", "ceph osd pool rename a b", danger, ""},
		{"ceph unknown read-ish verb", "ceph osd getcrushmap", unknown, "not a look"},
	})
}
