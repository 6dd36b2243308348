package slack_test

import (
	"os"
	"slices"
	"testing"

	slackapi "github.com/slack-go/slack"
	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
)

// TestManifestScopes: the manifest asks for exactly the scopes the adapter
// checks for, and the fake reports them; no more, no fewer.
func TestManifestScopes(t *testing.T) {
	b, err := os.ReadFile("../../configs/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Features struct {
			AgentView *struct {
				Description string `yaml:"agent_description"`
			} `yaml:"agent_view"`
			AssistantView any `yaml:"assistant_view"`
			AppHome       struct {
				HomeTab bool `yaml:"home_tab_enabled"`
			} `yaml:"app_home"`
		} `yaml:"features"`
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				Bot []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			Interactivity struct {
				On bool `yaml:"is_enabled"`
			} `yaml:"interactivity"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("the manifest does not parse: %v", err)
	}
	got := slices.Sorted(slices.Values(m.OAuth.Scopes.Bot))
	// The manifest grants the on-call scope too, for installs that name
	// on-call approvers; the adapter needs it only then (Config.ByEmail).
	want := slices.Sorted(slices.Values(append(slices.Clip(slack.Scopes), slack.ScopeEmail)))
	if !slices.Equal(got, want) {
		t.Errorf("manifest scopes %v, adapter needs %v", got, want)
	}
	if fake := slices.Sorted(slices.Values(slacktest.Scopes)); !slices.Equal(fake, want) {
		t.Errorf("the fake grants %v, adapter needs %v", fake, want)
	}
	wantEvents := []string{"agent_session_stopped", "app_home_opened", "app_mention", "message.channels", "message.groups", "message.im", "message.mpim"}
	if !slices.Equal(slices.Sorted(slices.Values(m.Settings.Events.Bot)), wantEvents) {
		t.Errorf("manifest events %v, want %v", m.Settings.Events.Bot, wantEvents)
	}
	// One surface: the agent view, whose Stop sends agent_session_stopped.
	if m.Features.AgentView == nil || m.Features.AgentView.Description == "" {
		t.Error("the manifest declares no features.agent_view with a description: Slack would show no Stop and send no agent_session_stopped")
	}
	if m.Features.AssistantView != nil {
		t.Error("the manifest declares features.assistant_view too; the app is an agent app (one surface)")
	}
	// The adapter handles app_home_opened (fromHome) and publishes the
	// inbox with views.publish, which needs the Home tab.
	if !m.Features.AppHome.HomeTab {
		t.Error("the manifest leaves features.app_home.home_tab_enabled off: the App Home the bot publishes would not show")
	}
	if !m.Settings.Interactivity.On {
		t.Error("the manifest leaves interactivity off: buttons would not work")
	}
}

// TestManifestTyped: the manifest reads into slack-go's typed Manifest,
// agent view included, as apps.manifest.update would take it.
func TestManifestTyped(t *testing.T) {
	b, err := os.ReadFile("../../configs/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m slackapi.Manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("the manifest does not read as slack-go's Manifest: %v", err)
	}
	if m.Features.AgentView == nil || m.Features.AgentView.AgentDescription == "" {
		t.Error("features.agent_view is missing or has no agent_description")
	}
	if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, "agent_session_stopped") {
		t.Error("the manifest does not subscribe to agent_session_stopped: the Stop would not reach the bot")
	}
}
