package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/bot"
)

// decideTimeout bounds one decision made in the browser; the bot's own
// check bounds what it waits for before anything changes.
const decideTimeout = 30 * time.Second

// storeDown is the banner of a page whose store did not answer.
const storeDown = "The approval store cannot be reached just now: no card is shown and nothing can be decided until it answers. This page tries again by itself."

type handlers struct {
	s   *Server
	bot Bot
}

// page is what every page template reads.
type page struct {
	Title    string
	Signed   bool
	Who      string // the signed-in person, in words
	Platform string
	CSRF     string
	Banner   string
	// Refused says why a request was refused (a page of its own).
	Refused string
	Notices []string
	Cards   []bot.PendingCard
	Events  []approval.Event
	Filter  historyFilter
	ID      string
	Now     time.Time
	// Token is the sign-in link's token, on the page that spends it.
	Token  string
	Report *report
	// Seen marks the cards the page draws; its live script hands it to
	// /events, which speaks only when the cards differ from it.
	Seen string
	// OIDC: the sign-in page offers the provider.
	OIDC bool
}

var funcs = template.FuncMap{
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return now.Sub(t).Round(time.Second).String() + " ago"
	},
	"stamp":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"dur":     func(d time.Duration) string { return d.Round(time.Second).String() },
	"visible": func(s string) string { v, _ := adapters.Visible(s); return v },
	"join":    strings.Join,
}

func (h *handlers) render(w http.ResponseWriter, status int, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if p.Now.IsZero() {
		p.Now = h.s.now()
	}
	if err := h.s.pages.ExecuteTemplate(w, name, p); err != nil {
		h.s.log.Error("render a console page", "err", err, "page", name)
	}
}

// refuse answers with a page that says why nothing was done.
func (h *handlers) refuse(w http.ResponseWriter, status int, title, why string, c *claims) {
	p := page{Title: title, Refused: why}
	if c != nil {
		p.Signed, p.Who, p.Platform, p.CSRF = true, c.User.Display(), c.Platform, h.s.csrf(*c)
	}
	h.render(w, status, "refused", p)
}

// signedIn reads the session, or answers with the page that says why
// there is none and returns false.
func (h *handlers) signedIn(w http.ResponseWriter, r *http.Request) (claims, bool) {
	c, err := h.s.session(r)
	switch {
	case err == nil:
		return c, true
	case errors.Is(err, errNoSession):
		h.render(w, http.StatusUnauthorized, "signin", page{Title: "Sign in", OIDC: h.s.oidc != nil})
	default:
		h.s.endSession(w)
		h.refuse(w, http.StatusUnauthorized, "Session refused",
			"Your session cookie was refused: "+err.Error()+". Type !login in the chat for a new sign-in link.", nil)
	}
	return claims{}, false
}

// sameOrigin reports whether a POST comes from a page of the console:
// its Origin, when the browser sends one, is the console's own (the
// address the request was made to, or console.url's).
func (h *handlers) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // an older browser, or no browser: the CSRF token decides
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	base, _ := url.Parse(h.s.base)
	return u.Host == r.Host || base != nil && u.Scheme == base.Scheme && u.Host == base.Host
}

// foreign refuses a POST from another site's page.
func (h *handlers) foreign(w http.ResponseWriter) {
	h.refuse(w, http.StatusForbidden, "Request refused",
		"The request came from a page of another site, so nothing was done. Use the console's own pages.", nil)
}

// posted checks a state-changing request: from the console's own pages,
// with a session and its CSRF token.
func (h *handlers) posted(w http.ResponseWriter, r *http.Request) (claims, bool) {
	if !h.sameOrigin(r) {
		h.foreign(w)
		return claims{}, false
	}
	c, ok := h.signedIn(w, r)
	if !ok {
		return c, false
	}
	got := r.PostFormValue("csrf")
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(h.s.csrf(c))) != 1 {
		h.refuse(w, http.StatusForbidden, "Request refused",
			"The form did not carry this session's CSRF token, so nothing was done (a page of another site cannot act for you). Reload the page and try again.", &c)
		return c, false
	}
	return c, true
}

func (h *handlers) base(c claims, title string) page {
	return page{Title: title, Signed: true, Who: c.User.Display(), Platform: c.Platform, CSRF: h.s.csrf(c)}
}

// list reads the cards c's person may see, or sets the page's banner, and
// marks what the page then draws.
func (h *handlers) list(ctx context.Context, c claims, p *page) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cards, err := h.bot.ConsolePending(ctx, c.who())
	p.Seen = mark(cards, err)
	if err != nil {
		h.s.log.Warn("list the pending cards for the console", "err", err, "user", c.User.ID)
		p.Banner = storeDown
		return
	}
	p.Cards = cards
}

func (h *handlers) pending(w http.ResponseWriter, r *http.Request) {
	c, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	p := h.base(c, "Pending approvals")
	h.list(r.Context(), c, &p)
	status := http.StatusOK
	if p.Banner != "" {
		status = http.StatusServiceUnavailable
	}
	h.render(w, status, "pending", p)
}

// cards is the list of cards alone, which the live page fetches when
// its events say the cards changed.
func (h *handlers) cards(w http.ResponseWriter, r *http.Request) {
	c, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	p := h.base(c, "")
	h.list(r.Context(), c, &p)
	h.render(w, http.StatusOK, "cards", p)
}

// events tells a live page, as server-sent events, each time the cards
// its person may see change (a card asked, decided, voted on, expired;
// on any replica: the store is read). The page says what it draws (seen,
// its list's mark; on a reconnection, the last event's id): a stream
// that began with an event for the cards the page already shows had the
// page redraw them at once, replacing the elements a person (or a test)
// was about to click.
func (h *handlers) events(w http.ResponseWriter, r *http.Request) {
	c, err := h.s.session(r)
	if err != nil {
		http.Error(w, "not signed in", http.StatusUnauthorized)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no streaming here", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	last := r.URL.Query().Get("seen")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		last = id
	}
	t := time.NewTicker(h.s.every)
	defer t.Stop()
	for {
		if h.s.now().Unix() >= c.Expires {
			fmt.Fprint(w, "event: ended\ndata: session\n\n")
			fl.Flush()
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		cards, err := h.bot.ConsolePending(ctx, c.who())
		cancel()
		if m := mark(cards, err); m != last {
			last = m
			if _, err := fmt.Fprintf(w, "event: cards\nid: %s\ndata: %d\n\n", m, len(cards)); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// mark says, in a few characters, what a page shows of cards: a change of
// it is a change to draw.
func mark(cards []bot.PendingCard, err error) string {
	if err != nil {
		return "down"
	}
	sum := sha256.New()
	for _, c := range cards {
		fmt.Fprintf(sum, "%s|%s|%s|%d|%s;", c.Card.ApprovalID, c.Card.State, c.Needs, len(c.Votes), c.Card.Operation)
	}
	return base64.RawURLEncoding.EncodeToString(sum.Sum(nil)[:12])
}

// loginPage shows the sign-in of a link without spending it: a link
// previewer (a chat unfurling it) must not use it up; the person's button
// does (POST).
func (h *handlers) loginPage(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("t")
	c, err := open(h.s.key, tok, "link", h.s.now())
	if err != nil {
		h.refuse(w, http.StatusUnauthorized, "Sign-in link refused", linkRefusal(err), nil)
		return
	}
	p := page{Title: "Sign in", Token: tok, Who: c.User.Display(), Platform: c.Platform}
	h.render(w, http.StatusOK, "login", p)
}

func linkRefusal(err error) string {
	return "This sign-in link was refused: " + err.Error() + ". A link is valid for 5 minutes and once; type !login in the chat for a new one."
}

// login spends a sign-in link, once across every replica (the store
// remembers it), and starts a session acting as its chat user.
func (h *handlers) login(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(r) { // another site must not sign a browser in as someone else
		h.foreign(w)
		return
	}
	c, err := open(h.s.key, r.PostFormValue("t"), "link", h.s.now())
	if err != nil {
		h.refuse(w, http.StatusUnauthorized, "Sign-in link refused", linkRefusal(err), nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	first, err := h.s.store.FirstDelivery(ctx, "console-link:"+c.Nonce, linkTTL+time.Minute)
	if err != nil {
		h.s.log.Warn("spend a console sign-in link", "err", err)
		h.refuse(w, http.StatusServiceUnavailable, "Sign-in failed",
			"The approval store cannot be reached just now, so the link could not be checked and nobody was signed in. Try the same link again in a moment.", nil)
		return
	}
	if !first {
		h.refuse(w, http.StatusUnauthorized, "Sign-in link refused", linkRefusal(errors.New("it was used already")), nil)
		return
	}
	if err := h.s.startSession(w, c); err != nil {
		h.refuse(w, http.StatusInternalServerError, "Sign-in failed", "The session could not be made: "+err.Error(), nil)
		return
	}
	h.s.log.Info("console sign-in", "platform", c.Platform, "user", c.User.ID)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (h *handlers) logout(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.posted(w, r); !ok {
		return
	}
	h.s.endSession(w)
	h.render(w, http.StatusOK, "signin", page{Title: "Signed out", Notices: []string{"You are signed out."}})
}

// decide hands a decision to the bot, as the signed-in chat user, and
// shows what came of it. The bot makes the one check; a refusal comes
// back as its notice.
func (h *handlers) decide(w http.ResponseWriter, r *http.Request) {
	c, ok := h.posted(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("id"))
	action := r.PostFormValue("action")
	if action != "approve" && action != "cancel" {
		h.refuse(w, http.StatusBadRequest, "Request refused", "The form named no decision (approve or cancel); nothing was done.", &c)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), decideTimeout)
	defer cancel()
	d := adapters.Decision{ApprovalID: id, Approve: action == "approve", Reason: strings.TrimSpace(r.PostFormValue("reason"))}
	ans, err := h.bot.ConsoleDecide(ctx, c.who(), d)
	h.answered(w, r, c, id, ans, err)
}

// edit hands an edit of a waiting card to the bot, as the signed-in
// chat user: the edited call is judged afresh, as theirs.
func (h *handlers) edit(w http.ResponseWriter, r *http.Request) {
	c, ok := h.posted(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("id"))
	op := strings.TrimSpace(r.PostFormValue("operation"))
	if op == "" {
		h.refuse(w, http.StatusBadRequest, "Edit refused", "The edit gave no operation; nothing changed.", &c)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), decideTimeout)
	defer cancel()
	ans, err := h.bot.ConsoleEdit(ctx, c.who(), id, op)
	h.answered(w, r, c, id, ans, err)
}

// answered shows what came of a decision or an edit: the bot's notices,
// else the approval's state as the store has it now.
func (h *handlers) answered(w http.ResponseWriter, r *http.Request, c claims, id string, ans bot.ConsoleAnswer, err error) {
	if errors.Is(err, approval.ErrNotFound) {
		h.refuse(w, http.StatusNotFound, "No such approval", "There is no approval "+id+" (it may have been cleaned up); nothing changed.", &c)
		return
	}
	if err != nil {
		h.s.log.Warn("a console decision", "err", err, "approval", id, "user", c.User.ID)
		h.refuse(w, http.StatusServiceUnavailable, "Nothing was decided",
			"The decision could not be made: "+err.Error()+". Nothing changed; try again in a moment.", &c)
		return
	}
	p := h.base(c, "Approval "+id)
	p.ID = id
	p.Notices = ans.Notices
	if len(p.Notices) == 0 {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		a, gerr := h.s.store.Get(ctx, id)
		cancel()
		switch {
		case gerr != nil:
			p.Notices = []string{"Your decision on " + id + " was handed to the bot; its card in the chat shows what came of it."}
		default:
			p.Notices = []string{"Approval " + id + " is now " + string(a.State) + "."}
		}
	}
	h.render(w, http.StatusOK, "answer", p)
}

// historyFilter is the history page's filter, as the form gives it.
type historyFilter struct {
	Channel, Tool, Person, Decision, Since string
}

// historyMax bounds the events one history page shows (the most recent).
const historyMax = 500

func (h *handlers) history(w http.ResponseWriter, r *http.Request) {
	c, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	p := h.base(c, "History")
	q := r.URL.Query()
	p.Filter = historyFilter{Channel: q.Get("channel"), Tool: q.Get("tool"), Person: q.Get("person"), Decision: q.Get("decision"), Since: q.Get("since")}
	if h.s.audit == nil {
		p.Banner = "No audit log is readable here: configure audit.file or audit.mysql, or a Redis store, for the history."
		h.render(w, http.StatusOK, "history", p)
		return
	}
	f := auditsink.Filter{Channel: p.Filter.Channel, Actor: p.Filter.Person}
	if p.Filter.Since != "" {
		d, err := time.ParseDuration(p.Filter.Since)
		if err != nil || d <= 0 {
			h.refuse(w, http.StatusBadRequest, "Filter refused", "since "+p.Filter.Since+": give a duration back from now, such as 24h or 30m.", &c)
			return
		}
		f.Since = h.s.now().Add(-d)
	}
	events, err := h.read(r.Context(), f)
	if err != nil {
		p.Banner = "The audit log cannot be read just now; try again in a moment."
		h.render(w, http.StatusServiceUnavailable, "history", p)
		return
	}
	for _, e := range events {
		if p.Filter.Tool != "" && e.Tool != p.Filter.Tool || p.Filter.Decision != "" && string(e.Decision) != p.Filter.Decision {
			continue
		}
		if e.Actor != c.User.ID && (e.Channel == "" || !h.bot.ConsoleMayRead(c.who(), e.Channel)) {
			continue // a channel this person may not decide in
		}
		p.Events = append(p.Events, e)
	}
	slices.Reverse(p.Events) // most recent first
	if len(p.Events) > historyMax {
		p.Events = p.Events[:historyMax]
	}
	h.render(w, http.StatusOK, "history", p)
}

func (h *handlers) read(ctx context.Context, f auditsink.Filter) ([]approval.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return h.s.audit.Read(ctx, f)
}

// story is one approval's whole story: asked, judged (rule and reasons),
// carded, voted, ran, outcome; shown when one of its events is of a
// channel the person may read.
func (h *handlers) story(w http.ResponseWriter, r *http.Request) {
	c, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	p := h.base(c, "Approval "+id)
	p.ID = id
	if !approval.ValidID(id) {
		h.refuse(w, http.StatusNotFound, "No such approval", "No approval has the id "+id+".", &c)
		return
	}
	if h.s.audit == nil {
		p.Banner = "No audit log is readable here: configure audit.file or audit.mysql, or a Redis store, for the history."
		h.render(w, http.StatusOK, "story", p)
		return
	}
	events, err := h.read(r.Context(), auditsink.Filter{ApprovalID: id})
	if err != nil {
		p.Banner = "The audit log cannot be read just now; try again in a moment."
		h.render(w, http.StatusServiceUnavailable, "story", p)
		return
	}
	readable := false
	for _, e := range events {
		if e.Actor == c.User.ID || e.Channel != "" && h.bot.ConsoleMayRead(c.who(), e.Channel) {
			readable = true
		}
	}
	if !readable {
		h.refuse(w, http.StatusNotFound, "No such approval", "No approval "+id+" is in the history of a channel you may decide in.", &c)
		return
	}
	p.Events = events
	h.render(w, http.StatusOK, "story", p)
}
