package shelltool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/tools"
)

// makeTree creates files (a name ending in "/" is a directory) under root.
func makeTree(t testing.TB, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func entries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func preview(t testing.TB, tool *Tool, args cmdArgs) tools.Preview {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Preview(context.Background(), raw)
}

// A wildcard delete's preview lists exactly the files that a real rm of that
// glob then removes.
func TestPreviewMatchesWhatRmRemoves(t *testing.T) {
	tests := []struct {
		name    string
		command string
		workdir string
	}{
		{name: "rm -rf glob", command: "rm -rf ./tmp_*"},
		{name: "rm glob without -r leaves directories", command: "rm -f tmp_*"},
		{name: "several globs and a missing operand", command: "rm -rf -- *.log tmp_[ab] missing.txt"},
		{name: "brace and class", command: "rm -r {keep,tmp_c}.txt tmp_?"},
		{name: "in a workdir", command: "rm -rf *", workdir: "tmp_c"},
		{name: "inside a list and a subshell", command: "echo start && (rm -rf tmp_c) ; rm tmp_a"},
		{name: "through sudo-less wrapper", command: "nohup rm -f -- tmp_b"},
		{name: "hidden needs its own dot", command: "rm -rf .tmp_*"},
		{name: "rmdir", command: "rmdir empty_* tmp_c"},
		{name: "unlink", command: "unlink tmp_a"},
		{name: "inside bash -c", command: "bash -c 'rm -rf tmp_?' && sh -ec \"rm -f *.log\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, nil)
			makeTree(t, tool.root, "tmp_a", "tmp_b", "keep.txt", "tmp_c/one", "tmp_c/sub/two", ".tmp_x", "a.log", "b.log", "empty_1/")
			dir := filepath.Join(tool.root, tt.workdir)
			before := entries(t, dir)

			p := preview(t, tool, cmdArgs{Command: tt.command, Workdir: tt.workdir})
			if p.Err != "" {
				t.Fatalf("preview failed: %s", p.Err)
			}
			var previewed []string
			for _, item := range p.Items {
				previewed = append(previewed, filepath.Clean(item))
			}
			slices.Sort(previewed)

			res := run(t, tool, cmdArgs{Command: tt.command, Workdir: tt.workdir})
			if !res.Executed {
				t.Fatalf("the command did not run: %s", res.JSON())
			}
			after := entries(t, dir)
			var removed []string
			for _, name := range before {
				if !slices.Contains(after, name) {
					removed = append(removed, name)
				}
			}
			if len(removed) == 0 {
				t.Fatalf("the command removed nothing (%s); the test proves nothing", res.JSON())
			}
			if diff := cmp.Diff(removed, previewed); diff != "" {
				t.Errorf("preview %q (%s) differs from what rm removed (-removed +previewed):\n%s", p.Items, p.Summary, diff)
			}
			if p.Total != len(p.Items) || p.Truncated {
				t.Errorf("total %d truncated %v for %d items", p.Total, p.Truncated, len(p.Items))
			}
		})
	}
}

func TestPreview(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.PreviewLimit = 5 })
	makeTree(t, tool.root, "a.txt", "dir/x", "dir/y/z", "sub/f")
	for i := range 12 {
		makeTree(t, tool.root, fmt.Sprintf("many/f%02d", i))
	}
	tests := []struct {
		name    string
		args    cmdArgs
		items   []string
		total   int
		summary []string
		err     string
	}{
		{name: "missing operand counted", args: cmdArgs{Command: "rm -f a.txt missing.txt"}, items: []string{"a.txt"}, total: 1, summary: []string{"rm would act on 1 existing path", "1 operand does not exist"}},
		{name: "directory without -r", args: cmdArgs{Command: "rm dir"}, summary: []string{"1 directory is left alone"}},
		{name: "directory with -r counts inside", args: cmdArgs{Command: "rm -r dir"}, items: []string{"dir"}, total: 1, summary: []string{"1 directory holding 3 entries"}},
		{name: "capped list", args: cmdArgs{Command: "rm many/f*"}, items: []string{"many/f00", "many/f01", "many/f02", "many/f03", "many/f04"}, total: 12, summary: []string{"12 existing paths", "and 7 more"}},
		{name: "sudo wrapper", args: cmdArgs{Command: "sudo -u root rm -rf dir"}, items: []string{"dir"}, total: 1},
		{name: "mv sources", args: cmdArgs{Command: "mv a.txt dir/x sub/"}, items: []string{"a.txt", "dir/x"}, total: 2},
		{name: "shred and truncate", args: cmdArgs{Command: "shred -n 3 -u a.txt; truncate -s 0 dir/x"}, items: []string{"a.txt", "dir/x"}, total: 2, summary: []string{"shred, truncate"}},
		{name: "find -delete lists starting points", args: cmdArgs{Command: "find dir sub -name '*.tmp' -delete"}, items: []string{"dir", "sub"}, total: 2, summary: []string{"not previewed"}},
		{name: "workdir", args: cmdArgs{Command: "rm *", Workdir: "sub"}, items: []string{"f"}, total: 1},
		{name: "variable from the scrubbed env", args: cmdArgs{Command: `rm "$NOPE"a.txt`}, items: []string{"a.txt"}, total: 1},
		{name: "variables set by the script", args: cmdArgs{Command: "D=dir; rm -r $D"}, summary: []string{"approximate"}},
		{name: "no deleter", args: cmdArgs{Command: "ls -la | grep x"}},
		{name: "nested shell", args: cmdArgs{Command: `sudo bash -c "rm -r dir"`}, items: []string{"dir"}, total: 1},
		{name: "nested shell with substitution", args: cmdArgs{Command: `bash -c "rm -r $(ls)"`}, err: "previews run nothing"},
		{name: "xargs", args: cmdArgs{Command: "find . -name '*.tmp' | xargs -n 10 rm -f a.txt"}, items: []string{"a.txt"}, total: 1, summary: []string{"xargs' input"}},
		{name: "find without -delete", args: cmdArgs{Command: "find . -name x"}},
		{name: "command substitution refused", args: cmdArgs{Command: "rm -rf $(cat list)"}, err: "previews run nothing"},
		{name: "process substitution refused", args: cmdArgs{Command: "rm <(ls) a.txt"}, err: "previews run nothing"},
		{name: "cd first", args: cmdArgs{Command: "cd dir && rm -rf *"}, err: "changes directory"},
		{name: "does not parse", args: cmdArgs{Command: "rm 'unterminated"}, err: "does not parse"},
		{name: "workdir outside", args: cmdArgs{Command: "rm x", Workdir: ".."}, err: "leaves the working root"},
		{name: "bad args", args: cmdArgs{}, err: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := preview(t, tool, tt.args)
			if !strings.Contains(p.Err, tt.err) || (tt.err == "" && p.Err != "") {
				t.Fatalf("preview error %q, want %q", p.Err, tt.err)
			}
			if diff := cmp.Diff(tt.items, p.Items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if p.Total != tt.total {
				t.Errorf("total %d, want %d", p.Total, tt.total)
			}
			for _, s := range tt.summary {
				if !strings.Contains(p.Summary, s) {
					t.Errorf("summary %q does not say %q", p.Summary, s)
				}
			}
		})
	}
}

// A preview runs nothing, even when the script would.
func TestPreviewRunsNothing(t *testing.T) {
	tool := newTool(t, nil)
	makeTree(t, tool.root, "a.txt")
	for _, cmd := range []string{
		"rm $(touch ran1) a.txt",
		"rm `touch ran2` a.txt",
		"rm <(touch ran3) a.txt",
		"touch ran4; rm a.txt",
		"rm ${X:=$(touch ran5)} a.txt",
	} {
		preview(t, tool, cmdArgs{Command: cmd})
	}
	if got := entries(t, tool.root); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("the previews changed the root: %q", got)
	}
}
