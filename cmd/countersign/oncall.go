package main

import (
	"fmt"
	"os"

	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/bot"
)

// onCallSections are the on-call services' sections by service name.
func onCallSections(cfg fileConfig) map[string]oncall.Config {
	return map[string]oncall.Config{oncall.PagerDuty: cfg.PagerDuty, oncall.Opsgenie: cfg.Opsgenie}
}

// onCallResolver answers who is on call for the approvers that name an
// on-call schedule (approval/oncall), with the services whose token is set.
func onCallResolver(cfg fileConfig) *oncall.Resolver {
	return oncall.Build(onCallSections(cfg), os.Getenv)
}

// onCallErrors checks the services' sections, and refuses an on-call
// approver entry whose service has no token: it would stand for nobody.
func onCallErrors(cfg fileConfig, getenv func(string) string) []error {
	sections := onCallSections(cfg)
	var errs []error
	for _, service := range oncall.Services {
		errs = append(errs, sections[service].Validate(service)...)
	}
	for _, l := range approverLists(cfg.Bot) {
		for i, a := range l.entries {
			e, ok, err := oncall.Parse(a)
			if !ok || err != nil {
				continue // not on call, or the rules' own error
			}
			env := sections[e.Service].WithDefaults(e.Service).TokenEnv
			if getenv(env) == "" {
				errs = append(errs, fmt.Errorf("%s.%s[%d]: %s needs a %s token, but $%s is empty; set it (or name another variable in %s.token_env), or remove the entry",
					l.key, l.field, i, e, e.Title(), env, e.Service))
			}
		}
	}
	return errs
}

// namesOnCall reports whether an approver list names an on-call
// schedule, so that the chat adapter must find people by e-mail.
func namesOnCall(c bot.Config) bool {
	for _, l := range approverLists(c) {
		for _, a := range l.entries {
			if _, ok, _ := oncall.Parse(a); ok {
				return true
			}
		}
	}
	return false
}

// approverList is one list of approvers in the bot's section.
type approverList struct {
	key, field string // "bot.rules[2]", "approvers"
	entries    []string
}

// approverLists are every list that names approvers: the approvers and
// escalate_to of bot.default, each channel and each rule.
func approverLists(c bot.Config) []approverList {
	out := []approverList{
		{"bot.default", "approvers", c.Default.Approvers},
		{"bot.default", "escalate_to", c.Default.EscalateTo},
	}
	for _, name := range sortedKeys(c.Channels) {
		ch := c.Channels[name]
		out = append(out, approverList{"bot.channels." + name, "approvers", ch.Approvers},
			approverList{"bot.channels." + name, "escalate_to", ch.EscalateTo})
	}
	for i, r := range c.Rules {
		key := fmt.Sprintf("bot.rules[%d]", i)
		out = append(out, approverList{key, "approvers", r.Approvers}, approverList{key, "escalate_to", r.EscalateTo})
	}
	return out
}
