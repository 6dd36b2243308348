package console_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/bot/console"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// idp is a fake OpenID Connect provider (an outside service): it signs
// in whoever the test says, at once, and can be told to misbehave.
type idp struct {
	srv  *httptest.Server
	key  *rsa.PrivateKey
	mu   sync.Mutex
	user string            // the chat user id the next sign-in names
	code map[string]string // code → nonce
	// badSig signs with another key; badNonce answers another nonce.
	badSig, badNonce bool
}

func newIdP(t *testing.T) *idp {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{key: key, code: map[string]string{}}
	mux := http.NewServeMux()
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]string{"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize",
			"token_endpoint": p.srv.URL + "/token", "jwks_uri": p.srv.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		e := big.NewInt(int64(key.E)).Bytes()
		js(w, map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(e)}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := q.Get("nonce") + "-code"
		p.mu.Lock()
		p.code[code] = q.Get("nonce")
		p.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		nonce, ok := p.code[r.PostFormValue("code")]
		user, badSig, badNonce := p.user, p.badSig, p.badNonce
		p.mu.Unlock()
		if !ok || r.PostFormValue("client_secret") != "s3cret" || r.PostFormValue("client_id") != "console" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		if badNonce {
			nonce = "another"
		}
		claims := map[string]any{"iss": p.srv.URL, "aud": "console", "exp": time.Now().Add(time.Hour).Unix(),
			"nonce": nonce, "chat_id": user, "name": strings.ToUpper(user[:1]) + user[1:]}
		signer := key
		if badSig {
			signer, _ = rsa.GenerateKey(rand.Reader, 2048)
		}
		js(w, map[string]string{"id_token": jwt(t, signer, claims)})
	})
	return p
}

func jwt(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	hdr, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	s := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(body)
	sum := sha256.Sum256([]byte(s))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Error(err)
	}
	return s + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestOIDC: a person signs in through the provider, as the chat user its
// claim names, and sees the cards that user may decide; a token signed by
// another key, or for another sign-in, is refused.
func TestOIDC(t *testing.T) {
	p := newIdP(t)
	store := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = store.Close() })
	srv := httptest.NewUnstartedServer(nil)
	con, err := console.New(console.Config{Listen: srv.Listener.Addr().String(), OIDC: console.OIDCConfig{
		Issuer: p.srv.URL, ClientID: "console", ClientSecretEnv: "OIDC_SECRET", Platform: "terminal", Claim: "chat_id",
	}}, console.Deps{Store: store, Getenv: func(k string) string {
		if k == "OIDC_SECRET" {
			return "s3cret"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry()
	pol, _ := risk.New(risk.Config{})
	f := adaptertest.NewFake("terminal")
	b, err := bot.New(bot.Config{}, []adapters.Adapter{f}, agent.Config{}, bot.Deps{Store: store, Tools: reg, Policy: pol,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = con.Handler(b)
	srv.Start()
	t.Cleanup(srv.Close)

	cases := []struct {
		name             string
		badSig, badNonce bool
		status           int
		want             string
	}{
		{"signed in", false, false, http.StatusOK, "Signed in as Bob"},
		{"another key", true, false, http.StatusUnauthorized, "signature does not verify"},
		{"another sign-in", false, true, http.StatusUnauthorized, "nonce is not this sign-in's"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.mu.Lock()
			p.user, p.badSig, p.badNonce = "bob", c.badSig, c.badNonce
			p.mu.Unlock()
			br := newBrowser(t)
			status, body := br.get(t, srv.URL+"/oidc/start")
			if status != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("got %d, want %d with %q:\n%s", status, c.status, c.want, body)
			}
			status, body = br.get(t, srv.URL+"/")
			if signed := status == http.StatusOK && strings.Contains(body, "Bob · terminal"); signed != (c.status == http.StatusOK) {
				t.Errorf("signed in %v after the sign-in (%d):\n%s", signed, status, body)
			}
		})
	}
	t.Run("a callback this browser did not start", func(t *testing.T) {
		status, body := newBrowser(t).get(t, srv.URL+"/oidc/callback?code=x&state=y")
		if status != http.StatusUnauthorized || !strings.Contains(body, "did not start it") {
			t.Errorf("got %d:\n%s", status, body)
		}
	})
}
