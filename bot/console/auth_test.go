package console

import (
	"net/http/httptest"
	"testing"

	"github.com/countersign/countersign/approval/memstore"
)

// TestSecureCookie: the session cookie is Secure unless the console is
// plain HTTP on loopback.
func TestSecureCookie(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want bool
	}{
		{"http on loopback", Config{Listen: "127.0.0.1:8791"}, false},
		{"localhost", Config{Listen: "127.0.0.1:8791", URL: "http://localhost:8791"}, false},
		{"https", Config{Listen: "0.0.0.0:8791", URL: "https://cs.example.com"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := memstore.New(memstore.Options{})
			defer store.Close()
			s, err := New(c.cfg, Deps{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			if err := s.startSession(rec, claims{Platform: "slack"}); err != nil {
				t.Fatal(err)
			}
			cks := rec.Result().Cookies()
			if len(cks) != 1 || cks[0].Secure != c.want || !cks[0].HttpOnly {
				t.Errorf("cookies %+v; want one, HttpOnly, Secure %v", cks, c.want)
			}
		})
	}
}
