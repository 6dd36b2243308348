package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/countersign/countersign/risk"
)

// TestOwnFilesReachThePolicy: the config file, the log file and the audit
// file are told to the policy as its own files, and a shell read of the
// config file needs a person whatever the model says (issue 25).
func TestOwnFilesReachThePolicy(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "countersign.yaml")
	yaml := "log:\n  file: " + filepath.Join(dir, "bot.log") + "\naudit:\n  file:\n    path: audit.jsonl\ntools:\n  root: " + dir + "\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	auditAbs, err := filepath.Abs("audit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{cfgPath, filepath.Join(dir, "bot.log"), auditAbs} {
		if !slices.Contains(cfg.Risk.OwnFiles, want) {
			t.Errorf("OwnFiles = %q, want it to hold %s", cfg.Risk.OwnFiles, want)
		}
	}
	if cfg.Risk.ToolsRoot != dir {
		t.Errorf("ToolsRoot = %q, want %q", cfg.Risk.ToolsRoot, dir)
	}
	p, err := risk.New(cfg.Risk)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{`{"command":"cat countersign.yaml","risk_level":"low"}`, `{"command":"sed -i s/a/b/ ` + cfgPath + `","risk_level":"low"}`} {
		v := p.Assess(risk.Call{Tool: risk.ToolCommand, Args: []byte(c), Mode: risk.Smart})
		if v.Decision == risk.Auto || v.Rule != risk.RuleDanger {
			t.Errorf("%s = %s by %s, want a danger: %v", c, v.Decision, v.Rule, v.Reasons)
		}
	}
}
