package redact

import (
	"slices"
	"strings"
	"testing"
)

// assignTexts hold secret words in the shapes that make the password
// rule's start matter: long names, names that run into a word, two
// assignments on a line, quotes, JSON, and words with no assignment.
var assignTexts = []string{
	`password = "p#ss$w0rd!"`,
	"DB_PASSWORD=Tr0ub4dor&3\nDB_HOST=db\nexport X_TOKEN='a1#b2$c3'\n",
	`{"user":"app","password": "s3cr3t\"quoted","host":"db","db_pwd":"zz9plural","api_key":"ops_x","key_prefix":"ops_"}`,
	"xpassword=abc1234 a.b.secret_key: 'v v v' ...token=t0k3nvalue;secret=1",
	`"scopes":["keys:read","keys:write"],"token_expires_at":"2027-01-01T00:00:00Z"`,
	"-Dauth.api.key.header=X-Api-Key --token-ttl=3600 --session-secret-file=/run/secrets/session",
	"password:\nsecret\n'password'  :  'x y z' PASSWORD=$DB_PASSWORD passphrase=\"\"",
	strings.Repeat("a_", 40) + "token=abcdefghij",
	strings.Repeat("a.", 80) + "token=abcdefghij -" + strings.Repeat("b-", 50) + "secret=x x-password=yyyyyy",
}

// TestAssignMatchesLines holds assignMatches to the password rule's
// expression run over each line whole, as the rule was first applied.
func TestAssignMatchesLines(t *testing.T) {
	e := passwordAssignment(t)
	for _, s := range append(slices.Clone(assignTexts), strings.Join(assignTexts, "\n")) {
		checkAssign(t, e, s)
	}
}

func FuzzAssignMatches(f *testing.F) {
	for _, s := range assignTexts {
		f.Add(s)
	}
	e := passwordAssignment(f)
	f.Fuzz(func(t *testing.T, s string) { checkAssign(t, e, s) })
}

func passwordAssignment(t testing.TB) extra {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.extras {
		if e.after != nil {
			return e
		}
	}
	t.Fatal("no extra rule has an after filter")
	return extra{}
}

func checkAssign(t *testing.T, e extra, s string) {
	t.Helper()
	whole := e.re.get()
	var want [][]int
	for start := 0; start <= len(s); {
		end := lineEnd(s, start)
		for _, m := range whole.FindAllStringSubmatchIndex(s[start:end], -1) {
			for g := range m {
				if m[g] >= 0 {
					m[g] += start
				}
			}
			want = append(want, m)
		}
		start = end + 1
	}
	got := e.assignMatches(s, asciiLower(s))
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("assignMatches(%q) = %v, want %v", s, got, want)
	}
}
