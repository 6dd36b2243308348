package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/bot"
)

// addSlack appends the Slack adapter to ads when its bot token is set
// ($SLACK_BOT_TOKEN, or the variable slack.bot_token_env names), telling
// it which user groups the approver lists mention.
func addSlack(ads *[]adapters.Adapter, cfg fileConfig, getenv func(string) string, log *slog.Logger) error {
	ad, err := slackAdapter(cfg, getenv, log)
	if err != nil || ad == nil {
		return err
	}
	*ads = append(*ads, ad)
	return nil
}

func slackAdapter(cfg fileConfig, getenv func(string) string, log *slog.Logger) (*slack.Adapter, error) {
	if err := cfg.Slack.Validate(); err != nil {
		return nil, err
	}
	if getenv(cfg.Slack.WithDefaults().BotTokenEnv) == "" {
		return nil, nil
	}
	cfg.Slack.ByEmail = namesOnCall(cfg.Bot) // oncall.go
	ad, err := slack.New(cfg.Slack, getenv, log)
	if err != nil {
		return nil, err
	}
	ad.WatchGroups(approverGroups(cfg.Bot)...)
	return ad, nil
}

// approverGroups lists the "group:" entries of every approver list.
func approverGroups(c bot.Config) []string {
	var out []string
	add := func(p bot.Policy) {
		for _, a := range p.Approvers {
			if g, ok := strings.CutPrefix(a, "group:"); ok && g != "" {
				out = append(out, g)
			}
		}
	}
	add(c.Default)
	for _, p := range c.Channels {
		add(p)
	}
	return out
}

// checkSlack is config check's part for Slack: when the bot token is set,
// it asks Slack whether the tokens and scopes work. It returns a line for
// the report, "" when Slack is not configured.
func checkSlack(ctx context.Context, cfg fileConfig, getenv func(string) string) (string, error) {
	ad, err := slackAdapter(cfg, getenv, nil)
	if err != nil || ad == nil {
		return "", err
	}
	return ad.Check(ctx)
}
