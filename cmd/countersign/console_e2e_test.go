package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunServesTheConsole: `countersign run` with console.listen serves
// the web console; !login in the terminal gives a link that signs bob in,
// and his Approve in the browser runs the card's command.
func TestRunServesTheConsole(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "countersign.yaml")
	if err := os.WriteFile(cfg, []byte("console:\n  listen: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in, out, done := startRun(t, dir, cfg)
	defer func() {
		_ = in.Close()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	waitFor(t, out, regexp.MustCompile(`console: http://127\.0\.0\.1:\d+`))
	if _, err := io.WriteString(in, "!run rm -rf ./tmp_*\n"); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`approve ([a-z2-7]{26})`).FindStringSubmatch(waitFor(t, out, regexp.MustCompile(`type: approve [a-z2-7]{26}`)))[1]
	if _, err := io.WriteString(in, "/as bob\n!login\n"); err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`http://\S+/login\?t=\S+`).FindString(waitFor(t, out, regexp.MustCompile(`sign-in link.*http://\S+/login\?t=\S+`)))

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	body := fetch(t, c, http.MethodGet, link, nil)
	tok := regexp.MustCompile(`name="t" value="([^"]+)"`).FindStringSubmatch(body)
	if tok == nil {
		t.Fatalf("the sign-in page:\n%s", body)
	}
	base := strings.SplitN(link, "/login", 2)[0]
	page := fetch(t, c, http.MethodPost, base+"/login", url.Values{"t": {tok[1]}})
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil || !strings.Contains(page, id) {
		t.Fatalf("bob's pending page lacks the card %s:\n%s", id, page)
	}
	fetch(t, c, http.MethodPost, base+"/decide", url.Values{"csrf": {csrf[1]}, "id": {id}, "action": {"approve"}})
	waitFor(t, out, regexp.MustCompile(`approved by bob at .* · done: exit code 0`))
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err == nil {
		t.Error("tmp_a is still there after bob's approval")
	}
	// The story, from the store's audit stream as run wires it.
	if story := fetch(t, c, http.MethodGet, base+"/approval/"+id, nil); !strings.Contains(story, ">execution<") || !strings.Contains(story, ">assessment<") {
		t.Errorf("the story of %s:\n%s", id, story)
	}
}

func fetch(t *testing.T, c *http.Client, method, u string, form url.Values) string {
	t.Helper()
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = c.PostForm(u, form)
	} else {
		resp, err = c.Get(u)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
