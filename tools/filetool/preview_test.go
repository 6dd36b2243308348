package filetool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPreview(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.PreviewItems = 3 })
	root := tool.cfg.Root
	write(t, filepath.Join(root, "f.txt"), "12345")
	for i := range 4 {
		write(t, filepath.Join(root, "d", fmt.Sprintf("f%d", i)), "ab")
	}
	write(t, filepath.Join(root, "d", "sub", "g"), "abc")
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		raw       string
		summary   string
		items     []string
		total     int
		truncated bool
		err       string
	}{
		{name: "delete file", raw: `{"operation":"delete","path":"f.txt"}`, summary: `"f.txt" is a file of 5 bytes; it would be deleted`, items: []string{"f.txt"}, total: 1},
		{name: "delete dir without recursive", raw: `{"operation":"delete","path":"d"}`, summary: `"d" is a directory of 5 entries; without recursive the delete would be refused`},
		{name: "recursive delete walks", raw: `{"operation":"delete","path":"d","recursive":true}`,
			summary: `"d" and everything in it would be deleted: 5 files, 2 directories and 0 other entries, 11 bytes in files; the first 3 paths are listed, and 4 more`,
			items:   []string{"d", "d/f0", "d/f1"}, total: 7, truncated: true},
		{name: "write replaces", raw: `{"operation":"write","path":"f.txt","content":"xy"}`, summary: `"f.txt" is a file of 5 bytes; it would be replaced by 2 bytes`},
		{name: "write creates", raw: `{"operation":"write","path":"new","content":"xy"}`, summary: `"new" does not exist; it would be created with 2 bytes`},
		{name: "append", raw: `{"operation":"append","path":"f.txt","content":"xy"}`, summary: `"f.txt" is a file of 5 bytes; 2 bytes would be added`},
		{name: "mkdir exists", raw: `{"operation":"mkdir","path":"d"}`, summary: `"d" is a directory of 5 entries; it already exists`},
		{name: "outside", raw: `{"operation":"delete","path":"../x"}`, err: "leaves the file root"},
		{name: "through a link", raw: `{"operation":"delete","path":"out/x","recursive":true}`, err: "outside the file root through a symbolic link"},
		{name: "bad args", raw: `{"operation":"delete"}`, err: `argument "path": is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tool.Preview(context.Background(), json.RawMessage(tt.raw))
			if !strings.Contains(p.Err, tt.err) || (tt.err == "" && p.Err != "") {
				t.Fatalf("error %q, want %q", p.Err, tt.err)
			}
			if p.Summary != tt.summary {
				t.Errorf("summary\n got %q\nwant %q", p.Summary, tt.summary)
			}
			if diff := cmp.Diff(tt.items, p.Items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if p.Total != tt.total || p.Truncated != tt.truncated {
				t.Errorf("total %d truncated %v, want %d %v", p.Total, p.Truncated, tt.total, tt.truncated)
			}
		})
	}
	// A preview changes nothing.
	if _, err := os.Stat(filepath.Join(root, "d", "sub", "g")); err != nil {
		t.Fatalf("the preview changed the tree: %v", err)
	}
}
