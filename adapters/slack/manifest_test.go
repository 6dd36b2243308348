package slack_test

import (
	"os"
	"slices"
	"testing"

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
	want := slices.Sorted(slices.Values(slack.Scopes))
	if !slices.Equal(got, want) {
		t.Errorf("manifest scopes %v, adapter needs %v", got, want)
	}
	if fake := slices.Sorted(slices.Values(slacktest.Scopes)); !slices.Equal(fake, want) {
		t.Errorf("the fake grants %v, adapter needs %v", fake, want)
	}
	wantEvents := []string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim"}
	if !slices.Equal(slices.Sorted(slices.Values(m.Settings.Events.Bot)), wantEvents) {
		t.Errorf("manifest events %v, want %v", m.Settings.Events.Bot, wantEvents)
	}
	if !m.Settings.Interactivity.On {
		t.Error("the manifest leaves interactivity off: buttons would not work")
	}
}
