package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/risk"
)

// fileConfig is the configuration file. Each top-level section belongs to
// the package that uses it; main only assembles them. A key no section knows
// is an error that names it.
type fileConfig struct {
	Risk risk.Config `yaml:"risk"`
}

// loadConfig reads the YAML file at path. An empty path or an empty file is
// the default configuration.
func loadConfig(path string) (fileConfig, error) {
	var cfg fileConfig
	if path == "" {
		return cfg, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return cfg, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("read config %s: %w", path, err)
	}
	return cfg, nil
}
