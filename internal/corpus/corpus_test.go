package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	body := `{"tool":"execute_command","args":{"command":"ls"},"accept":["auto"],"name":"a"}

{"tool":"execute_sql","args":{"sql":"DROP TABLE t"},"accept":["confirm","block"]}
`
	if err := os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(`{"tool":"x","args":{},"accept":["block"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 {
		t.Fatalf("read %d cases, want 3", len(cases))
	}
	if c := cases[0]; c.File != "a.jsonl" || !c.BlockOnly() {
		t.Errorf("first case %+v, want a.jsonl's block-only case (files in name order)", c)
	}
	if c := cases[1]; c.Text != "ls" || !c.AutoOnly() || c.Where() != "b.jsonl:1" {
		t.Errorf("second case %+v", c)
	}
	if c := cases[2]; c.Text != "DROP TABLE t" || c.Line != 3 || c.Allows("auto") || !c.Allows("block") {
		t.Errorf("third case %+v", c)
	}
}

func TestReadRejectsBadLines(t *testing.T) {
	for name, body := range map[string]string{
		"not json":     "{nope\n",
		"no accept":    `{"tool":"x","args":{}}` + "\n",
		"empty accept": `{"tool":"x","args":{},"accept":[]}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "c.jsonl"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Read(dir); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	if _, err := Read(t.TempDir()); err == nil {
		t.Fatal("want an error for a folder without corpora")
	}
}
