package slack

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	slackapi "github.com/slack-go/slack"
)

// Scopes are the bot token scopes the adapter needs, and no more:
// app_mentions:read (mentions), channels:history, groups:history,
// im:history, mpim:history (thread replies and direct messages, and
// conversations.replies to tell whether a thread is a conversation),
// chat:write (replies, cards, updates, ephemeral notices), files:write
// (operations and outputs too long for a card), usergroups:read
// (approver groups), users:read (approvers given by id shown by name),
// channels:read, groups:read, im:read, mpim:read
// (conversations.members: the App Home lists only the cards of
// conversations the person is in). configs/slack-app-manifest.yaml lists
// the same.
var Scopes = []string{"app_mentions:read", "channels:history", "channels:read", "chat:write", "files:write", "groups:history", "groups:read", "im:history", "im:read", "mpim:history", "mpim:read", "usergroups:read", "users:read"}

// ScopeEmail is needed only when an approver is whoever is on call
// (Config.ByEmail): users.lookupByEmail finds the people PagerDuty and
// Opsgenie name by e-mail. An install without on-call approvers need not
// grant it.
const ScopeEmail = "users:read.email"

// Check asks Slack whether the adapter can work: the bot token with
// auth.test, its scopes from the X-OAuth-Scopes header, and in Socket Mode
// the app-level token with apps.connections.open (which only hands out a
// URL; nothing is dialled). Its error names what is wrong and how to fix
// it; the summary says who the bot is.
func (a *Adapter) Check(ctx context.Context) (summary string, err error) {
	var scopes string
	api := slackapi.New(a.botToken, slackapi.OptionAPIURL(a.apiURL),
		slackapi.OptionAppLevelToken(a.appToken),
		slackapi.OptionHTTPClient(&http.Client{Timeout: 15e9}),
		slackapi.OptionOnResponseHeaders(func(path string, h http.Header) {
			if path == "auth.test" {
				scopes = h.Get("X-OAuth-Scopes")
			}
		}))
	r, err := api.AuthTestContext(ctx)
	if err != nil {
		if se, ok := err.(slackapi.SlackErrorResponse); ok && se.Err == "not_allowed_token_type" {
			return "", fmt.Errorf("slack: $%s is not a bot token; copy the Bot User OAuth Token (xoxb-) from OAuth & Permissions", a.cfg.BotTokenEnv)
		}
		return "", fmt.Errorf("slack: auth.test at %s with $%s: %w", a.apiURL, a.cfg.BotTokenEnv, err)
	}
	if missing := missingScopes(scopes, a.cfg.ByEmail); len(missing) > 0 {
		return "", fmt.Errorf("slack: the bot token lacks the scope(s) %s; add them under OAuth & Permissions (or create the app from configs/slack-app-manifest.yaml) and reinstall the app", strings.Join(missing, ", "))
	}
	if a.mode == "socket" {
		if _, _, err := api.StartSocketModeContext(ctx); err != nil {
			if se, ok := err.(slackapi.SlackErrorResponse); ok && se.Err == "not_allowed_token_type" {
				return "", fmt.Errorf("slack: $%s is not an app-level token; create one (xapp-) with the connections:write scope under Basic Information → App-Level Tokens", a.cfg.AppTokenEnv)
			}
			return "", fmt.Errorf("slack: apps.connections.open with $%s: %w; the app-level token needs connections:write and the app Socket Mode", a.cfg.AppTokenEnv, err)
		}
	}
	return fmt.Sprintf("slack: %s mode, bot user %s in team %s (%s) at %s", a.mode, r.UserID, r.TeamID, r.Team, a.apiURL), nil
}

// missingScopes lists the needed scopes that header (X-OAuth-Scopes)
// lacks; byEmail adds ScopeEmail to them.
func missingScopes(header string, byEmail bool) []string {
	have := map[string]bool{}
	for _, s := range strings.Split(header, ",") {
		have[strings.TrimSpace(s)] = true
	}
	var missing []string
	need := Scopes
	if byEmail {
		need = append(slices.Clip(need), ScopeEmail)
	}
	for _, s := range need {
		if !have[s] {
			missing = append(missing, s)
		}
	}
	slices.Sort(missing)
	return missing
}
