package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/redact"
	"github.com/countersign/countersign/tools/shelltool"
)

// Secrets put together at run time, so this file is no finding itself.
var (
	leakAWS   = "AKIA" + "QX3ZT7WNBV2MRL5K"
	leakSlack = "xoxb-" + "1234567890123-1234567890123-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7"
	leakLog   = "2026-11-26 10:00 deploy with " + leakAWS + "\n2026-11-26 10:01 notify via " + leakSlack + "\n"
)

func redactor(t *testing.T) *redact.Redactor {
	t.Helper()
	x, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// leakyTool returns a secret in every field of its result and preview, and
// in its progress reports.
type leakyTool struct{}

func (leakyTool) Name() string            { return "leaky" }
func (leakyTool) Description() string     { return "leaks" }
func (leakyTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (leakyTool) Run(_ context.Context, _ json.RawMessage, opts tools.RunOptions) tools.Result {
	if opts.Progress != nil {
		opts.Progress(tools.Progress{Tail: leakLog})
	}
	data, _ := json.Marshal(map[string]any{"token": leakSlack, "list": []any{leakAWS, 1}})
	return tools.Result{
		Status: tools.StatusOK, Executed: true,
		Stdout: leakLog, Stderr: leakLog, Body: leakLog, Content: leakLog,
		Error: leakLog, Message: leakLog, Note: "capped",
		Columns: []tools.Column{{Name: "'" + leakAWS + "'", Type: "VARCHAR"}},
		Rows:    [][]any{{leakSlack, int64(3), nil}},
		Headers: map[string]string{"X-Token": leakSlack},
		Data:    data,
	}
}

func (leakyTool) Preview(context.Context, json.RawMessage) tools.Preview {
	return tools.Preview{Summary: leakLog, Items: []string{leakAWS}, Err: leakSlack}
}

func TestRegistryRedactsEveryPath(t *testing.T) {
	r, err := tools.NewRegistry(leakyTool{})
	if err != nil {
		t.Fatal(err)
	}
	r.Redact(redactor(t))
	ctx := context.Background()
	var tails []string
	opts := tools.RunOptions{Progress: func(p tools.Progress) { tails = append(tails, p.Tail) }}
	looked, ok := r.Lookup("leaky")
	if !ok {
		t.Fatal("Lookup lost the tool")
	}
	pv, ok := looked.(tools.Previewer)
	if !ok {
		t.Fatal("the redacting wrapper dropped the Previewer capability")
	}
	viaRun := r.Run(ctx, "leaky", nil, opts)
	viaLookup := looked.Run(ctx, nil, opts)
	preview, _ := r.Preview(ctx, "leaky", nil)
	seen := map[string]any{
		"Registry.Run": viaRun, "Lookup().Run": viaLookup,
		"Registry.Preview": preview, "Lookup().Preview": pv.Preview(ctx, nil),
		"progress": tails,
	}
	for path, v := range seen {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), leakAWS) || strings.Contains(string(b), leakSlack) {
			t.Errorf("%s let a secret through: %s", path, b)
		}
	}
	if len(tails) != 2 {
		t.Errorf("progress reported %d times, want 2", len(tails))
	}
	// 2 per log text × 6 texts, 1 column, 1 row, 1 header, 2 in data.
	if viaRun.Redacted != 17 || !strings.Contains(viaRun.Note, "17 values that look like secrets were replaced") ||
		!strings.HasPrefix(viaRun.Note, "capped; ") {
		t.Errorf("Redacted = %d, Note = %q", viaRun.Redacted, viaRun.Note)
	}
	if !strings.Contains(viaRun.Stdout, "[redacted: aws-access-token]") || !strings.Contains(viaRun.Stdout, "[redacted: slack-bot-token]") {
		t.Errorf("Stdout = %q: the rule is not named", viaRun.Stdout)
	}
	if !strings.Contains(viaRun.JSON(), `"redacted":17`) {
		t.Errorf("the model is not told how many values were redacted: %s", viaRun.JSON())
	}
}

// TestRegistryRedactsRealTools reads a log holding secrets with the file
// tool and with cat through the shell tool.
func TestRegistryRedactsRealTools(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "app.log"), []byte(leakLog), 0o600); err != nil {
		t.Fatal(err)
	}
	ft, err := filetool.New(filetool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	st, err := shelltool.New(shelltool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tools.NewRegistry(ft, st)
	if err != nil {
		t.Fatal(err)
	}
	r.Redact(redactor(t))
	ctx := context.Background()
	for name, call := range map[string]struct {
		tool string
		args string
	}{
		"file read": {filetool.Name, `{"operation":"read","path":"app.log"}`},
		"cat":       {shelltool.Name, `{"command":"cat app.log; cat app.log >&2"}`},
	} {
		t.Run(name, func(t *testing.T) {
			res := r.Run(ctx, call.tool, json.RawMessage(call.args), tools.RunOptions{AutoRun: true})
			js := res.JSON()
			if res.Status != tools.StatusOK || !strings.Contains(js, "[redacted: ") {
				t.Fatalf("result = %s", js)
			}
			if strings.Contains(js, leakAWS) || strings.Contains(js, leakSlack) {
				t.Errorf("a secret went through: %s", js)
			}
		})
	}
}

func TestRegistryWithoutRedactorChangesNothing(t *testing.T) {
	r, err := tools.NewRegistry(leakyTool{})
	if err != nil {
		t.Fatal(err)
	}
	r.Redact(nil)
	if res := r.Run(context.Background(), "leaky", nil, tools.RunOptions{}); res.Stdout != leakLog || res.Redacted != 0 {
		t.Errorf("Redact(nil) changed the result: %+v", res)
	}
}

// TestRegistryWithRedacts: tools added later (MCP servers' tools, With)
// are found and redacted like the first ones.
func TestRegistryWithRedacts(t *testing.T) {
	r, err := tools.NewRegistry(stubTool{"a", objSchema})
	if err != nil {
		t.Fatal(err)
	}
	r.Redact(redactor(t))
	q, err := r.With(leakyTool{})
	if err != nil {
		t.Fatal(err)
	}
	looked, ok := q.Lookup("leaky")
	if !ok {
		t.Fatal("a tool added with With is not found in a redacting registry")
	}
	for path, res := range map[string]tools.Result{
		"Registry.Run": q.Run(context.Background(), "leaky", nil, tools.RunOptions{}),
		"Lookup().Run": looked.Run(context.Background(), nil, tools.RunOptions{}),
	} {
		if b, _ := json.Marshal(res); strings.Contains(string(b), leakAWS) || res.Redacted == 0 {
			t.Errorf("%s of a tool added with With let a secret through: %s", path, b)
		}
	}
	if _, ok := q.Lookup("a"); !ok {
		t.Error("With lost the first registry's tool")
	}
}

// argsTool records the arguments it runs with and shows its command as
// its operation.
type argsTool struct{ ran *string }

func (argsTool) Name() string            { return "args" }
func (argsTool) Description() string     { return "runs a command" }
func (argsTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (argsTool) Title() string           { return "Run this?" }
func (argsTool) Direct() tools.Direct    { return tools.Direct{} }
func (argsTool) Operation(raw json.RawMessage) tools.Operation {
	var a struct{ Command string }
	_ = json.Unmarshal(raw, &a)
	return tools.Operation{Text: a.Command}
}
func (t argsTool) Run(_ context.Context, raw json.RawMessage, _ tools.RunOptions) tools.Result {
	var a struct{ Command string }
	_ = json.Unmarshal(raw, &a)
	*t.ran = a.Command
	return tools.Result{Status: tools.StatusOK, Executed: true}
}

// TestOperationMasksSecretsInArguments: a secret in a call's own arguments
// is masked in the operation text every surface shows (card, chat, log,
// audit record), while what runs is exactly the call as asked.
func TestOperationMasksSecretsInArguments(t *testing.T) {
	for _, c := range []struct{ name, command, secret string }{
		{"bearer on curl", `curl -H "Authorization: Bearer s3cr3tT0ken.abc" https://api.internal/v1/items`, "s3cr3tT0ken.abc"},
		{"mysql -p", "mysql -u root -pSup3rS3cret -e 'SHOW REPLICA STATUS\\G'", "Sup3rS3cret"},
		{"password in sql", "ALTER USER 'app'@'%' IDENTIFIED BY 'N3wP4ss#1'", "N3wP4ss#1"},
		{"token in env", "GITHUB_TOKEN=" + "ghp_" + "R4nd0mL00k1ngT0k3nV4lu3Xy7Zq2Wp9Kd8F" + " gh api /user", "R4nd0mL00k1ngT0k3nV4lu3Xy7Zq2Wp9Kd8F"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ran string
			reg, err := tools.NewRegistry(argsTool{&ran})
			if err != nil {
				t.Fatal(err)
			}
			reg.Redact(redactor(t))
			raw, _ := json.Marshal(map[string]string{"command": c.command})
			op := reg.Operation("args", raw)
			if strings.Contains(op.Text, c.secret) || !op.Masked {
				t.Errorf("Operation = %+v: the secret is shown, or Masked is not set", op)
			}
			if !strings.Contains(op.Text, "[redacted: ") {
				t.Errorf("Operation = %q: no mark says what was hidden", op.Text)
			}
			reg.Run(context.Background(), "args", raw, tools.RunOptions{})
			if ran != c.command {
				t.Errorf("ran %q, want exactly %q", ran, c.command)
			}
		})
	}
	t.Run("nothing to hide", func(t *testing.T) {
		var ran string
		reg, _ := tools.NewRegistry(argsTool{&ran})
		reg.Redact(redactor(t))
		op := reg.Operation("args", json.RawMessage(`{"command":"df -h /var"}`))
		if op.Text != "df -h /var" || op.Masked {
			t.Errorf("Operation = %+v, want the command unchanged and not masked", op)
		}
	})
}

// TestPasswordColumnsRedacted: a SQL result column named like a password
// or hash has every value hidden, whatever it looks like; columns that
// only say something about passwords are kept.
func TestPasswordColumnsRedacted(t *testing.T) {
	res := tools.Result{
		Status: tools.StatusOK, Executed: true,
		Columns: []tools.Column{{Name: "User"}, {Name: "authentication_string"}, {Name: "password_expired"}, {Name: "users.password_hash"}},
		Rows:    [][]any{{"app", "plainpass", "N", "x9"}, {"root", "", "Y", nil}},
	}
	got := tools.RedactResult(res, redactor(t))
	want := [][]any{{"app", tools.ColumnMark, "N", tools.ColumnMark}, {"root", "", "Y", nil}}
	for i := range want {
		for j := range want[i] {
			if got.Rows[i][j] != want[i][j] {
				t.Errorf("row %d col %d = %v, want %v", i, j, got.Rows[i][j], want[i][j])
			}
		}
	}
	if got.Redacted != 2 {
		t.Errorf("Redacted = %d, want 2", got.Redacted)
	}
}
