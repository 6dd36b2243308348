package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/configs"
)

const configHelp = `Usage: countersign config check [--config FILE] [--root DIR] [--connect]
       countersign config example

check    validates the configuration as run would (tools, policy, model
         settings, and a connection to Redis when one is configured) and
         prints the effective configuration, defaults filled in and secrets
         redacted. Exit status 1 when it is not valid.
         --connect also reaches every configured backend (Redis, each SQL
         connection and its read-only account, the model's /models) and
         reports each by name; exit status 1 when one is down.
         --root DIR sets tools.root, as for run.
example  prints the documented example configuration.
`

// configMain is `countersign config`.
func configMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, configHelp)
		return 2
	}
	switch args[0] {
	case "example":
		fs := flag.NewFlagSet("config example", flag.ContinueOnError)
		if code, done := parseFlags(fs, args[1:], configHelp, stdout, stderr); done {
			return code
		}
		_, _ = stdout.Write(configs.Example)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, configHelp)
		return 0
	case "check":
	default:
		fmt.Fprintf(stderr, "countersign config: unknown command %q\n\n%s", args[0], configHelp)
		return 2
	}
	fs := flag.NewFlagSet("config check", flag.ContinueOnError)
	path := fs.String("config", "", "YAML configuration file")
	root := fs.String("root", "", "where the command and file tools work (tools.root)")
	connect := fs.Bool("connect", false, "reach every configured backend and report each")
	if code, done := parseFlags(fs, args[1:], configHelp, stdout, stderr); done {
		return code
	}
	p := configPath(*path)
	cfg, err := loadConfig(p)
	if _, ok := errors.AsType[*keyProblems](err); ok {
		withRoot(*root)(&cfg)
		err = errors.Join(err, validateConfig(cfg, os.Getenv))
	}
	if err != nil {
		reportProblems(stderr, p, err)
		return 1
	}
	withRoot(*root)(&cfg)
	a, err := build(context.Background(), cfg, env{getenv: os.Getenv, logOut: io.Discard, dial: !*connect})
	if err != nil {
		reportProblems(stderr, p, err)
		return 1
	}
	defer a.close()
	platforms, err := checkPlatforms(cfg, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "countersign config check: %v\n", err)
		return 1
	}
	extras, err := extrasLines(cfg, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "countersign config check: %v\n", err)
		return 1
	}
	platforms += extras
	out, err := yaml.Marshal(a.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "countersign config check: %v\n", err)
		return 1
	}
	src := p
	if src == "" {
		src = "(none: embedded defaults)"
	}
	fmt.Fprintf(stdout, "# config: %s\n# valid. tools: %s; approvals: %s; model: %s\n%s",
		src, strings.Join(a.names, ", "), a.where, modelSummary(a), platforms)
	if line, _ := fenceLine(a.cfg); line != "" {
		fmt.Fprintf(stdout, "# fence: %s\n", line) // runas.go
	}
	code := 0
	if *connect {
		rs := reachAll(context.Background(), a.backends(cfg, os.Getenv, true))
		fmt.Fprintf(stdout, "# connections (%d):\n", len(rs))
		if len(rs) == 0 {
			fmt.Fprintln(stdout, "#   none configured: approvals in memory, no SQL, no model")
		}
		for _, r := range rs {
			if r.err != nil {
				fmt.Fprintf(stdout, "#   down  %s: %v\n", r.name, r.err)
				fmt.Fprintf(stderr, "countersign config check: %s is down: %v\n", r.name, r.err)
				code = 1
			} else {
				fmt.Fprintf(stdout, "#   ok    %s\n", r.name)
			}
			if r.warn != "" {
				fmt.Fprintf(stdout, "#   warn  %s: %s\n", r.name, r.warn)
				fmt.Fprintf(stderr, "countersign config check: warning: %s: %s\n", r.name, r.warn)
			}
		}
		a.printMCPListed(stdout) // mcp.go
	}
	_, _ = stdout.Write(out)
	return code
}

// checkPlatforms asks each configured chat platform whether its tokens
// work, and returns a "# " line per platform.
func checkPlatforms(cfg fileConfig, getenv func(string) string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var b strings.Builder
	if line, err := checkSlack(ctx, cfg, getenv); err != nil {
		return "", err
	} else if line != "" {
		b.WriteString("# " + line + "\n")
	}
	return b.String(), nil
}

// extrasLines says, a "# " line per platform run would serve, which
// extras its adapter has and which it lacks, each lack with the fallback
// (adapters.Extras): what the bot logs at start. It makes the adapters
// without starting them.
func extrasLines(cfg fileConfig, getenv func(string) string) (string, error) {
	ads, err := chatAdapters(cfg, getenv, discardLogger())
	if err != nil {
		return "", err
	}
	if len(ads) == 0 || on(cfg.Terminal.Enabled, false) {
		ads = append(ads, terminal.New(strings.NewReader(""), io.Discard, terminal.Options{Color: "never"}))
	}
	var b strings.Builder
	for _, ad := range ads {
		has, lacks := ad.Extras().List()
		fmt.Fprintf(&b, "# %s extras: %s", ad.Name(), orNone(has))
		if len(lacks) > 0 {
			fmt.Fprintf(&b, "; lacks %s", strings.Join(lacks, ", "))
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// modelSummary names the model the bot talks to, or says how to set one.
func modelSummary(a *app) string {
	if a.model == nil {
		return "none, direct commands only (set OPENAI_API_KEY, or OPENAI_BASE_URL and OPENAI_MODEL)"
	}
	return a.cfg.LLM.Model
}

// reportProblems prints every problem of the configuration at path, one a
// line.
func reportProblems(w io.Writer, path string, err error) {
	ps := problems(err)
	if len(ps) == 1 {
		fmt.Fprintf(w, "countersign config check: %s\n", ps[0])
		return
	}
	if path == "" {
		path = "the configuration"
	}
	fmt.Fprintf(w, "countersign config check: %d problems in %s:\n", len(ps), path)
	for _, p := range ps {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}
