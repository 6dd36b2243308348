package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/bot/console"
	"github.com/countersign/countersign/cmd/internal/ops"
	"github.com/countersign/countersign/cmd/internal/telemetry"
	"github.com/countersign/countersign/tools/shelltool"
)

const runHelp = `Usage: countersign [run] [--config FILE] [--root DIR]

Starts the bot. With no configuration it talks to you in this terminal, keeps
approvals in memory, and offers the command and file tools rooted at the
current folder; SQL and HTTP stay off until configured.

In the terminal:
  !run <command>         run a shell command (read-only ones run at once)
  !sql <statement>       run SQL (needs tools.execute_sql in the config)
  !http <METHOD> <url>   send an HTTP request (needs tools.http_request)
  !file <op> <path>      read, list, exists, stat, write, append, mkdir, delete
  !pending               open approvals in this channel
  !help                  list the ! commands
  approve <id>           approve a card; cancel <id> [reason] cancels it
  /as <name>             act as another person (a second approver)
  /whoami /help /quit    who you are; the terminal's commands; leave (as does
                         the end of input)
  anything else          goes to the model, when one is configured

A model: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL and OPENAI_MODEL
for Ollama, vLLM or any OpenAI-compatible server.
Redis: set COUNTERSIGN_REDIS_URL=redis://host:6379/0, or store.redis_url.

Flags:
  --config FILE   YAML configuration (default $COUNTERSIGN_CONFIG); see
                  configs/countersign.example.yaml for every key
  --root DIR      where the command and file tools work (tools.root;
                  default the current folder)
`

// runMain is `countersign run`, the default command.
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	path := fs.String("config", "", "YAML configuration file")
	root := fs.String("root", "", "where the command and file tools work (tools.root)")
	if code, done := parseFlags(fs, args, runHelp, stdout, stderr); done {
		return code
	}
	ctx, stop := interruptible(stderr)
	defer stop()
	if err := run(ctx, configPath(*path), stdin, stdout, stderr, withRoot(*root), commandsNotAsRoot(os.Geteuid())); err != nil {
		if ps := problems(err); len(ps) > 1 {
			fmt.Fprintf(stderr, "countersign: %d problems in the configuration:\n  - %s\n", len(ps), strings.Join(ps, "\n  - "))
			return 1
		}
		fmt.Fprintf(stderr, "countersign: %v\n", err)
		return 1
	}
	return 0
}

// run starts the bot on the terminal adapter and returns when the input
// ends (after the work in flight) or ctx is cancelled.
func run(ctx context.Context, path string, stdin io.Reader, stdout, stderr io.Writer, opts ...option) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := build(ctx, cfg, env{
		getenv:   os.Getenv,
		logOut:   stderr,
		quietLog: isTerminal(stderr),
		dial:     true,
	})
	if err != nil {
		return err
	}
	defer a.close()
	if err := a.startMCP(ctx, cfg.MCP); err != nil { // mcp.go
		return err
	}

	tel, err := telemetry.Start(cfg.Telemetry, os.Getenv, version(), a.log) // docs/telemetry.md
	if err != nil {
		return err
	}
	defer tel.Shutdown(a.log) // after the bot's own shutdown: its last spans go too
	cfg.Slack.Transport, cfg.Discord.Transport = tel.Transport("slack"), tel.Transport("discord")
	ads, err := chatAdapters(cfg, os.Getenv, a.log)
	if err != nil {
		return err
	}
	var term *terminal.Terminal
	if len(ads) == 0 || on(cfg.Terminal.Enabled, false) {
		term = terminal.New(stdin, stdout, terminalOptions(cfg))
		ads = append(ads, term)
	}
	deps := bot.Deps{
		Model:  tel.Model(a.model, a.cfg.LLM.Model),
		Tools:  a.tools,
		Policy: a.policy,
		Store:  a.store,
		Log:    a.log,
		Tracer: tel.Tracer(),
		OnCall: onCallResolver(cfg),
	}
	var con *console.Server // the web console (bot/console), when console.listen is set
	if cfg.Console.Listen != "" {
		con, err = console.New(cfg.Console, console.Deps{
			Store: a.store, Audit: auditsink.Stream(a.store, int(a.cfg.Store.AuditMaxLen)), Getenv: os.Getenv, Log: a.log,
		})
		if err != nil {
			return err
		}
		deps.Login = con.Login
	}
	var opsrv *ops.Server
	if a.cfg.Ops.Listen != "" {
		opsrv, ads = a.meter(ads, &deps)
	}
	if cfg.Bot.ShutdownGrace == 0 && a.model != nil {
		// The grace covers a model call in flight: its own limit and a
		// little more for the reply (bot.DefaultShutdown covers the default).
		cfg.Bot.ShutdownGrace = max(bot.DefaultShutdown, cfg.LLM.TotalTimeout+15*time.Second)
	}
	cfg.Agent.Unfenced = unfencedTools(a.cfg) // runas.go
	cfg.Agent.NotOffline = notOfflineTools(a.cfg)
	cfg.Agent.Budget = cfg.LLM.Budget // agent/budget.go
	b, err := bot.New(cfg.Bot, ads, cfg.Agent, deps)
	if err != nil {
		return err
	}
	stopRuns := func() {
		// Abandon stops the calls the agent knows (approved and auto-run):
		// their contexts end with the forced quit as cause, their process
		// groups are killed, and it waits for their records; KillAll then
		// kills every process group the command tool still has (a command
		// no run of the agent holds), so that none outlives the exit.
		b.Abandon(3 * time.Second)
		if n := shelltool.KillAll(); n > 0 {
			a.log.Warn("a forced quit killed commands no call was waiting for", "process_groups", n)
		}
	}
	abandon.Store(&stopRuns)
	names := make([]string, len(ads))
	for i, ad := range ads {
		names[i] = ad.Name()
	}
	warnings := a.startWarnings(ctx, cfg, os.Geteuid())
	banner := fmt.Sprintf("Countersign %s · serving: %s · tools: %s · root: %s · approvals: %s",
		version(), strings.Join(names, ", "), strings.Join(a.names, ", "), a.cfg.Tools.Root, a.where)
	a.log.Info("countersign started", "platforms", names, "tools", a.names, "approvals", a.where)
	if opsrv != nil {
		if err := opsrv.Listen(a.cfg.Ops.Listen); err != nil {
			return err
		}
		defer opsrv.Close()
		banner += " · ops: http://" + opsrv.Addr()
		a.log.Info("serving metrics and health checks", "addr", opsrv.Addr())
	}
	if con != nil {
		if err := con.Listen(b); err != nil {
			return err
		}
		defer con.Close()
		ran := make(chan struct{})
		defer close(ran)
		go func() { // no decision from the browser once the shutdown starts
			select {
			case <-ctx.Done():
			case <-ran:
			}
			_ = con.Close()
		}()
		banner += " · console: " + con.URL()
		a.log.Info("serving the web console", "addr", con.Addr(), "url", con.URL())
	}
	if cfg.Gateway.Enabled() { // gateway.go
		gw, err := startGateway(cfg.Gateway, b, a.log)
		if err != nil {
			return err
		}
		defer gw.Close()
		banner += " · gateway: " + gatewayURL(cfg.Gateway, gw.Addr())
	}
	for _, w := range warnings {
		banner += "\nwarning: " + w
	}
	if found := a.pendingAtStart(ctx); found != "" {
		banner += "\n" + found
	}
	if term != nil {
		place := adapters.Place{Channel: terminal.Channel, Thread: terminal.Thread}
		if _, err := term.Post(ctx, place, adapters.Content{Text: banner + "\n" + b.Welcome()}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stderr, banner)
	}
	err = b.Run(ctx)
	if term != nil {
		a.sayPending(stdout)
	}
	return err
}

// chatAdapters returns the chat platforms the configuration and the
// environment turn on, each through its own file (slack.go, discord.go):
// a platform starts when its token is set. None means the terminal.
func chatAdapters(cfg fileConfig, getenv func(string) string, log *slog.Logger) ([]adapters.Adapter, error) {
	var ads []adapters.Adapter
	if err := addSlack(&ads, cfg, getenv, log); err != nil {
		return nil, err
	}
	if err := addDiscord(&ads, cfg.Discord, getenv, log); err != nil {
		return nil, err
	}
	return ads, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
