package console

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
)

// OIDCConfig signs people in through an OpenID Connect provider instead
// of (beside) !login: a claim of the ID token names the chat user the
// session acts as, on one platform. Only that user's id comes from the
// provider: the platform's groups and roles do not, nor the channels the
// person is in, so an approver list that names a group or a role refuses
// such a session, and a channel that lets anyone in it decide shows it
// nothing (fail closed; bot.ConsoleUser).
type OIDCConfig struct {
	// Issuer is the provider's issuer URL (its discovery document is at
	// Issuer/.well-known/openid-configuration); empty means no OIDC.
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the variable holding the client's secret.
	ClientSecretEnv string `yaml:"client_secret_env"`
	// Platform is the chat platform of the users the claim names
	// ("slack", "discord", "terminal").
	Platform string `yaml:"platform"`
	// Claim is the ID token's claim whose value is the chat user's id on
	// Platform (a custom claim such as "slack_id").
	Claim string `yaml:"claim"`
}

func (c OIDCConfig) check() error {
	if c.Issuer == "" {
		return nil
	}
	u, err := url.Parse(c.Issuer)
	if err != nil || u.Host == "" || u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())) {
		return fmt.Errorf("console.oidc.issuer %q: want the provider's https:// issuer URL", c.Issuer)
	}
	switch "" {
	case c.ClientID:
		return errors.New("console.oidc.client_id: set the client id the provider gave the console")
	case c.ClientSecretEnv:
		return errors.New("console.oidc.client_secret_env: name the variable that holds the client's secret")
	case c.Platform:
		return errors.New("console.oidc.platform: name the chat platform of the users the claim names (slack, discord, terminal)")
	case c.Claim:
		return errors.New("console.oidc.claim: name the ID token claim that holds the chat user's id")
	}
	return nil
}

// oidcTTL bounds a sign-in through the provider, from the redirect to the
// callback.
const oidcTTL = 10 * time.Minute

// oidcCookie holds the state and nonce of a sign-in through the provider.
const oidcCookie = "countersign_oidc"

// provider is the discovered provider and its keys.
type provider struct {
	cfg    OIDCConfig
	secret string
	client *http.Client

	mu   sync.Mutex
	meta *oidcMeta
	keys map[string]*rsa.PublicKey // kid → key
}

type oidcMeta struct {
	Issuer   string `json:"issuer"`
	Authz    string `json:"authorization_endpoint"`
	Token    string `json:"token_endpoint"`
	JWKSURI  string `json:"jwks_uri"`
	Fetched  time.Time
	KeysSeen time.Time
}

// discover reads the discovery document (once; again after an hour).
func (p *provider) discover(ctx context.Context) (*oidcMeta, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.meta != nil && time.Since(p.meta.Fetched) < time.Hour {
		return p.meta, nil
	}
	var m oidcMeta
	if err := p.getJSON(ctx, strings.TrimSuffix(p.cfg.Issuer, "/")+"/.well-known/openid-configuration", &m); err != nil {
		return nil, err
	}
	if m.Issuer != p.cfg.Issuer || m.Authz == "" || m.Token == "" || m.JWKSURI == "" {
		return nil, fmt.Errorf("the provider's discovery document names issuer %q (want %q) or lacks an endpoint", m.Issuer, p.cfg.Issuer)
	}
	m.Fetched = time.Now()
	p.meta = &m
	return p.meta, nil
}

func (p *provider) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// key returns the provider's key kid, reading the key set again when it
// does not know it (the provider rotated its keys).
func (p *provider) key(ctx context.Context, m *oidcMeta, kid string) (*rsa.PublicKey, error) {
	p.mu.Lock()
	k := p.keys[kid]
	p.mu.Unlock()
	if k != nil {
		return k, nil
	}
	var set struct {
		Keys []struct {
			Kty, Kid, N, E, Use string
		} `json:"keys"`
	}
	if err := p.getJSON(ctx, m.JWKSURI, &set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, j := range set.Keys {
		if j.Kty != "RSA" || j.Use != "" && j.Use != "sig" {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(j.N)
		e, err2 := base64.RawURLEncoding.DecodeString(j.E)
		if err1 != nil || err2 != nil || len(e) > 4 {
			continue
		}
		keys[j.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	p.mu.Lock()
	p.keys = keys
	p.mu.Unlock()
	if k := keys[kid]; k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("the provider has no RSA signing key %q", kid)
}

// verify checks an ID token (RS256 only) and returns its claims.
func (p *provider) verify(ctx context.Context, m *oidcMeta, tok, nonce string, now time.Time) (map[string]any, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, errors.New("the ID token is not a JWT")
	}
	var hdr struct{ Alg, Kid string }
	if err := decodeSegment(parts[0], &hdr); err != nil {
		return nil, err
	}
	if hdr.Alg != "RS256" {
		return nil, fmt.Errorf("the ID token is signed with %q; the console accepts RS256 only", hdr.Alg)
	}
	key, err := p.key(ctx, m, hdr.Kid)
	if err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, errors.New("the ID token's signature is not base64url")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil {
		return nil, errors.New("the ID token's signature does not verify")
	}
	var cl map[string]any
	if err := decodeSegment(parts[1], &cl); err != nil {
		return nil, err
	}
	if cl["iss"] != p.cfg.Issuer {
		return nil, fmt.Errorf("the ID token's issuer %v is not %s", cl["iss"], p.cfg.Issuer)
	}
	if !audience(cl["aud"], p.cfg.ClientID) {
		return nil, errors.New("the ID token is not for this console's client id")
	}
	exp, _ := cl["exp"].(float64)
	if now.Unix() >= int64(exp) {
		return nil, errors.New("the ID token has expired")
	}
	if cl["nonce"] != nonce {
		return nil, errors.New("the ID token's nonce is not this sign-in's")
	}
	return cl, nil
}

func decodeSegment(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return errors.New("the ID token is not base64url")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.New("the ID token is not JSON")
	}
	return nil
}

func audience(aud any, id string) bool {
	switch a := aud.(type) {
	case string:
		return a == id
	case []any:
		return slices.Contains(a, any(id))
	}
	return false
}

// oidcStart sends the browser to the provider.
func (h *handlers) oidcStart(w http.ResponseWriter, r *http.Request) {
	p := h.s.oidc
	if p == nil {
		h.refuse(w, http.StatusNotFound, "No single sign-on", "This console has no OIDC provider (console.oidc); type !login in the chat.", nil)
		return
	}
	m, err := p.discover(r.Context())
	if err != nil {
		h.s.log.Warn("OIDC discovery", "err", err)
		h.refuse(w, http.StatusBadGateway, "Sign-in failed", "The sign-in provider cannot be reached just now; type !login in the chat, or try again.", nil)
		return
	}
	c := claims{Kind: "oidc", Expires: h.s.now().Add(oidcTTL).Unix(), Nonce: nonce()}
	v, err := seal(h.s.key, c)
	if err != nil {
		h.refuse(w, http.StatusInternalServerError, "Sign-in failed", err.Error(), nil)
		return
	}
	// Lax, not Strict: it must come back with the provider's redirect.
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: v, Path: "/oidc/", HttpOnly: true, Secure: h.s.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(oidcTTL / time.Second)})
	q := url.Values{"response_type": {"code"}, "client_id": {p.cfg.ClientID}, "redirect_uri": {h.s.base + "/oidc/callback"},
		"scope": {"openid"}, "state": {c.Nonce}, "nonce": {c.Nonce}}
	sep := "?"
	if strings.Contains(m.Authz, "?") {
		sep = "&"
	}
	http.Redirect(w, r, m.Authz+sep+q.Encode(), http.StatusFound)
}

// oidcCallback takes the provider's answer and starts the session of the
// chat user its claim names.
func (h *handlers) oidcCallback(w http.ResponseWriter, r *http.Request) {
	p := h.s.oidc
	if p == nil {
		h.refuse(w, http.StatusNotFound, "No single sign-on", "This console has no OIDC provider (console.oidc).", nil)
		return
	}
	refuse := func(why string) {
		h.refuse(w, http.StatusUnauthorized, "Sign-in refused", "The sign-in through the provider was refused: "+why+". Try again, or type !login in the chat.", nil)
	}
	ck, err := r.Cookie(oidcCookie)
	if err != nil {
		refuse("this browser did not start it (no sign-in cookie)")
		return
	}
	st, err := open(h.s.key, ck.Value, "oidc", h.s.now())
	if err != nil {
		refuse("its cookie was refused: " + err.Error())
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Path: "/oidc/", MaxAge: -1, HttpOnly: true, Secure: h.s.secure})
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		refuse("the provider said " + e)
		return
	}
	if q.Get("state") == "" || q.Get("state") != st.Nonce {
		refuse("its state is not the one this browser started")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	m, err := p.discover(ctx)
	if err != nil {
		refuse("the provider cannot be reached")
		return
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {h.s.base + "/oidc/callback"},
		"client_id": {p.cfg.ClientID}, "client_secret": {p.secret}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Token, strings.NewReader(form.Encode()))
	if err != nil {
		refuse(err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(req)
	if err != nil {
		refuse("the provider's token endpoint cannot be reached")
		return
	}
	defer resp.Body.Close()
	var tok struct {
		IDToken string `json:"id_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tok) != nil || tok.IDToken == "" {
		refuse("the provider gave no ID token (" + resp.Status + ")")
		return
	}
	cl, err := p.verify(ctx, m, tok.IDToken, st.Nonce, h.s.now())
	if err != nil {
		refuse(err.Error())
		return
	}
	id, _ := cl[p.cfg.Claim].(string)
	if strings.TrimSpace(id) == "" {
		refuse("the ID token has no claim " + p.cfg.Claim + " naming your chat user")
		return
	}
	name, _ := cl["name"].(string)
	u := adapters.User{ID: id, Name: name}
	if err := h.s.startSession(w, claims{Platform: p.cfg.Platform, User: u}); err != nil {
		refuse(err.Error())
		return
	}
	h.s.log.Info("console sign-in through OIDC", "platform", p.cfg.Platform, "user", id)
	// A page, not a redirect: after the provider's cross-site redirect a
	// browser would not send the SameSite=Strict session along yet.
	h.render(w, http.StatusOK, "signedin", page{Title: "Signed in", Who: u.Display(), Platform: p.cfg.Platform})
}
