package main

import (
	"log/slog"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/discord"
)

// addDiscord appends the Discord adapter when its token is set
// (DISCORD_BOT_TOKEN, or discord.token_env): a bad discord: section is
// then an error that names the key.
func addDiscord(ads *[]adapters.Adapter, cfg discord.Config, getenv func(string) string, log *slog.Logger) error {
	if getenv(cfg.WithDefaults().TokenEnv) == "" {
		return nil
	}
	d, err := discord.New(cfg, getenv, log)
	if err != nil {
		return err
	}
	*ads = append(*ads, d)
	return nil
}
