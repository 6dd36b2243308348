package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/bot"
)

// linkTTL is how long a sign-in link is valid.
const linkTTL = 5 * time.Minute

// cookieName is the session cookie's name.
const cookieName = "countersign_session"

// claims is what a signed sign-in link or session cookie says: who (the
// chat user as the platform reported them when they typed !login), on
// which platform, until when, and a nonce (a link's is spent once; a
// session's keys its CSRF token).
type claims struct {
	Kind     string        `json:"k"` // "link" or "session"
	Platform string        `json:"p"`
	User     adapters.User `json:"u"`
	Expires  int64         `json:"e"` // unix seconds
	Nonce    string        `json:"n"`
	// Channel is where the person typed !login (bot.ConsoleUser).
	Channel string `json:"c,omitempty"`
}

// who is whom a session acts for.
func (c claims) who() bot.ConsoleUser {
	return bot.ConsoleUser{Platform: c.Platform, User: c.User, Channel: c.Channel}
}

// seal signs c with the key: base64url(JSON) "." base64url(HMAC-SHA256).
func seal(key []byte, c claims) (string, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	b := base64.RawURLEncoding.EncodeToString(body)
	return b + "." + base64.RawURLEncoding.EncodeToString(mac(key, "claims:"+b)), nil
}

// Why a link or a cookie is refused, each said on its page.
var (
	errForged  = errors.New("it was not signed by this console (a forged or damaged value, or one from a console with another key)")
	errExpired = errors.New("it has expired")
	errKind    = errors.New("it is not the right kind of token")
)

// open checks a sealed value's signature, kind and expiry.
func open(key []byte, s, kind string, now time.Time) (claims, error) {
	b, sig, ok := strings.Cut(s, ".")
	if !ok {
		return claims{}, errForged
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, "claims:"+b)) {
		return claims{}, errForged
	}
	body, err := base64.RawURLEncoding.DecodeString(b)
	if err != nil {
		return claims{}, errForged
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return claims{}, errForged
	}
	if c.Kind != kind {
		return claims{}, errKind
	}
	if now.Unix() >= c.Expires {
		return claims{}, errExpired
	}
	return c, nil
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Login makes the one-time sign-in link for who (bot.Login, the !login
// command's answer).
func (s *Server) Login(_ context.Context, who bot.ConsoleUser) (string, error) {
	if strings.TrimSpace(who.User.ID) == "" {
		return "", errors.New("console: a sign-in link needs the chat user's id, and the platform gave none")
	}
	tok, err := seal(s.key, claims{Kind: "link", Platform: who.Platform, User: who.User, Channel: who.Channel,
		Expires: s.now().Add(linkTTL).Unix(), Nonce: nonce()})
	if err != nil {
		return "", err
	}
	return s.base + "/login?t=" + tok, nil
}

// csrf is the CSRF token of a session: bound to its nonce by the key, so
// that a page of another site can neither read nor make it.
func (s *Server) csrf(c claims) string {
	return base64.RawURLEncoding.EncodeToString(mac(s.key, "csrf:"+c.Nonce))
}

// session reads the request's session; ok is false with the reason when
// there is none or it is refused (nil reason: not signed in at all).
func (s *Server) session(r *http.Request) (c claims, why error) {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return claims{}, errNoSession
	}
	return open(s.key, ck.Value, "session", s.now())
}

var errNoSession = errors.New("you are not signed in")

// startSession sets the session cookie for the user of a spent link.
func (s *Server) startSession(w http.ResponseWriter, link claims) error {
	c := claims{Kind: "session", Platform: link.Platform, User: link.User, Channel: link.Channel, Expires: s.now().Add(s.cfg.Session).Unix(), Nonce: nonce()}
	v, err := seal(s.key, c)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: v, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, Expires: time.Unix(c.Expires, 0), MaxAge: int(s.cfg.Session / time.Second),
	})
	return nil
}

// endSession clears the session cookie.
func (s *Server) endSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1,
	})
}
