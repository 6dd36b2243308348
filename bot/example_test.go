package bot_test

import (
	"context"
	"log/slog"
	"os"
	"os/signal"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/shelltool"
)

// Example wires the default setup of `countersign run`: the terminal, the
// in-memory store, the command and file tools rooted at the current
// folder, and no model (only direct commands). Errors are ignored here for
// brevity; main reports them and exits.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	sh, _ := shelltool.New(shelltool.Config{Root: "."})
	ft, _ := filetool.New(filetool.Config{Root: "."})
	reg, _ := tools.NewRegistry(sh, ft)
	pol, _ := risk.New(risk.Config{})
	store := memstore.New(memstore.Options{Logger: log})

	term := terminal.New(os.Stdin, os.Stdout, terminal.Options{})
	b, err := bot.New(bot.Config{}, []adapters.Adapter{term}, agent.Config{}, bot.Deps{
		Model: nil, // an llm.Client when OPENAI_API_KEY or OPENAI_BASE_URL is set
		Tools: reg, Policy: pol, Store: store, Log: log,
	})
	if err != nil {
		log.Error("start", "err", err)
		return
	}
	_, _ = term.Post(ctx, adapters.Place{Channel: terminal.Channel, Thread: terminal.Thread}, adapters.Content{Text: b.Welcome()})
	if err := b.Run(ctx); err != nil { // returns at the end of input, or after Ctrl-C once the work in flight is done
		log.Error("run", "err", err)
	}
}
