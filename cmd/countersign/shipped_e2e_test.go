package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/adapters/discord/discordtest"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools/mcptool"
)

// Issue 24, item 6: the configuration the image ships
// (configs/container.yaml: metrics on, Redis) with an audit file sink, run
// as `countersign run` against the fake Slack, keeps every guarantee and
// every extra that the bare configuration has. Before issue 24 the metrics
// decorators and the audit sink hid them: no thread status, no stream, no
// App Home, no inbox journal, no MCP pins, and nothing said so.

// shippedConfig is configs/container.yaml, as the image has it.
const shippedConfig = "../../configs/container.yaml"

// lockedBuffer is a log sink safe for the bot's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// heldModel is the fake model behind a gate: its first chat request waits
// until the test releases it, so that the test can look at what the bot
// keeps while a message is in hand.
type heldModel struct {
	*httptest.Server
	asked, release chan struct{}
	once, free     sync.Once
}

func newHeldModel(t *testing.T, script *agenttest.Server) *heldModel {
	h := &heldModel{asked: make(chan struct{}), release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			h.once.Do(func() {
				close(h.asked)
				select {
				case <-h.release:
				case <-r.Context().Done():
				}
			})
		}
		script.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.Release)
	return h
}

// Release lets the held request through.
func (h *heldModel) Release() { h.free.Do(func() { close(h.release) }) }

// TestShippedConfiguration runs configs/container.yaml itself, changing
// only addresses (the ops port, the Redis key prefix, the tools' root)
// and adding an audit file and an MCP server, and checks each thing the
// shipped image promises: the thread's status and streamed tasks, the App
// Home, the inbox journal of an accepted message, and the MCP pins.
func TestShippedConfiguration(t *testing.T) {
	redisURL := testenv.RedisURL(t)
	opt, err := goredis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rc := goredis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	prefix := "shipped-" + hex.EncodeToString(suffix)

	ops := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	ops.AddTool(&mcp.Tool{Name: "status", Description: "Reports the service status.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "all green"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ops }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	script := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-ls", "execute_command", `{"command":"ls","risk_level":"low"}`)),
		agenttest.Text("keep.txt is there."),
	)
	model := newHeldModel(t, script)
	fake := slacktest.New(t)

	path, err := filepath.Abs(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	slackEnv(t, fake, model.URL+"/v1", redisURL) // container.yaml: store.redis_url_env
	shipped, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if shipped.Ops.Listen == "" || shipped.Store.RedisURLEnv != DefaultRedisURLEnv {
		t.Fatalf("%s no longer turns metrics on and reads $%s: this test no longer tests what ships", shippedConfig, DefaultRedisURLEnv)
	}
	addresses := func(c *fileConfig) {
		c.Ops.Listen = "127.0.0.1:0"
		c.Store.Prefix = prefix
		c.Tools.Root = dir
		c.Audit.File.Path = auditFile
		c.MCP.Servers = map[string]mcptool.ServerConfig{"ops": {URL: hs.URL, Trusted: true}}
	}
	var stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, path, strings.NewReader(""), &stderr, &stderr, addresses) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if t.Failed() {
			t.Logf("the bot's output:\n%s", stderr.String())
		}
	})
	fake.Connected(t)
	if !strings.Contains(stderr.String(), "ops: http://127.0.0.1:") {
		t.Errorf("the banner does not say metrics are served:\n%s", stderr.String())
	}

	t.Run("extras logged", func(t *testing.T) {
		var said struct {
			Platform string   `json:"platform"`
			Has      []string `json:"has"`
			Lacks    []string `json:"lacks"`
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(line, `"msg":"adapter extras"`) {
				if err := json.Unmarshal([]byte(line), &said); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
			}
		}
		want := []string{"buttons", "forms", "status", "stream", "home", "undelivered", "link", "permalink", "by-email"}
		if said.Platform != "slack" || !slices.Equal(said.Has, want) || len(said.Lacks) != 0 {
			t.Errorf("the start log says Slack has %v and lacks %v (platform %q); want %v, lacking nothing", said.Has, said.Lacks, said.Platform, want)
		}
	})
	t.Run("MCP pins", func(t *testing.T) {
		pins, err := rc.HGetAll(t.Context(), prefix+":mcppin:{ops}").Result()
		if err != nil {
			t.Fatal(err)
		}
		if pins["status"] == "" {
			t.Errorf("the MCP tool ops/status is not pinned in Redis (%s:mcppin:{ops} = %v)", prefix, pins)
		}
	})

	thread := fake.Mention(alice, slackChannel, "", "what is in the folder?")
	select {
	case <-model.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the model was never asked")
	}
	t.Run("inbox journal", func(t *testing.T) {
		entries := prefix + ":{inbox}:e"
		pollUntil(t, 5*time.Second, "the accepted message in the inbox ("+entries+")", func() bool {
			n, err := rc.HLen(t.Context(), entries).Result()
			return err == nil && n >= 1
		})
	})
	model.Release()

	t.Run("thread status", func(t *testing.T) {
		fake.Wait(t, "a status on the thread", func() bool {
			for _, c := range fake.StatusLog() {
				if c.Thread == thread && c.Status != "" {
					return true
				}
			}
			return false
		})
	})
	t.Run("task stream", func(t *testing.T) {
		fake.Wait(t, "the turn streamed with its task, and stopped", func() bool {
			ss := fake.Streams(slackChannel, thread)
			return len(ss) == 1 && len(ss[0].Tasks) == 1 && ss[0].Stopped && strings.Contains(ss[0].Text, "keep.txt is there")
		})
	})
	t.Run("inbox answered", func(t *testing.T) {
		pollUntil(t, 5*time.Second, "the answered message gone from the inbox", func() bool {
			n, err := rc.HLen(t.Context(), prefix+":{inbox}:e").Result()
			return err == nil && n == 0
		})
	})
	t.Run("App Home", func(t *testing.T) {
		fake.Deliver(map[string]any{"type": "app_home_opened", "user": bob.ID, "channel": "D0BOB", "tab": "home", "event_ts": "1700000100.000001"})
		fake.Wait(t, "bob's App Home published", func() bool {
			for _, v := range fake.Views() {
				if v.Method == "views.publish" && v.UserID == bob.ID {
					return true
				}
			}
			return false
		})
	})
	t.Run("audit file", func(t *testing.T) {
		pollUntil(t, 5*time.Second, "the run of ls in the audit file", func() bool {
			b, _ := os.ReadFile(auditFile)
			return bytes.Contains(b, []byte(`"kind":"execution"`))
		})
	})
}

// TestShippedConfigurationDiscordTypes: with metrics on, as the image
// ships them, Discord's typing indicator still shows while the model
// works (the metrics wrapper once hid it).
func TestShippedConfigurationDiscordTypes(t *testing.T) {
	dir := discordFiles(t)
	fake := discordtest.New(t)
	model := agenttest.NewServer(t, agenttest.Reply{Content: "too late", Delay: time.Hour})
	startDiscord(t, dir, discordConfig(t, dir, "ops:\n  listen: 127.0.0.1:0\n"),
		"OPENAI_BASE_URL", model.BaseURL(), "OPENAI_MODEL", "test-model",
		"DISCORD_BOT_TOKEN", discordtest.Token, "DISCORD_API_URL", fake.URL)
	ops := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)

	th := fake.Say(t, dAlice, ops, "think about this for a long time", true)
	fake.Wait(t, "the typing indicator in the thread", func() bool { return len(fake.Typing(th)) > 0 })
	fake.Say(t, dAlice, th, "!cancel", true)
	said(t, fake, th, "Cancelled the model's turn")
}
