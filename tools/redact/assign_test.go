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
		if e.mid != nil {
			return e
		}
	}
	t.Fatal("no extra rule is tried from its hints")
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

// extraTexts are on-call lines for every extra rule, with and without a
// secret, and with hints where no match can be.
var extraTexts = append(slices.Clone(assignTexts),
	"DATABASE_URL=postgres://app:S3cr3t-Pa55w0rd@db.internal:5432/app\nREDIS_URL=redis://redis:6379/0 https://user@host/ x://a:b c://a\v:b@h\n",
	"see https://user:password@example.com/ and ftp://anon:@host/ and http://h/a:b@c",
	"ABCDEFGHIJKLMNOPQRST\r\nABCDEFGHIJKLMNOPQRSTU\nabcdefghijklmnopqrst\nABCDEFGHIJKLMNOPQRST",
	"mysql -u root -pSup3rS3cret -h db shop\nredis-cli -h cache -a r3disPass info\ncurl -u admin:hunter2x https://g/\n",
	"root:$6$rounds=5000$usesomesillystri$D4IrlXatmP7rx3P3InaxBeoomnAihC:19700\n| root | *6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9 |\n",
)

// TestExtraMatchesLines holds every extra rule's matches to its expression
// run over each line that holds one of its hints (over the whole text for
// a rule without hints), as the rules were first applied.
func TestExtraMatchesLines(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(slices.Clone(extraTexts), strings.Join(extraTexts, "\n")) {
		for _, e := range r.extras {
			checkExtra(t, e, s)
		}
	}
}

func FuzzExtraMatches(f *testing.F) {
	for _, s := range extraTexts {
		f.Add(s)
	}
	r, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range r.extras {
			checkExtra(t, e, s)
		}
	})
}

func checkExtra(t *testing.T, e extra, s string) {
	t.Helper()
	lower := asciiLower(s)
	var want [][]int
	if len(e.hints) == 0 {
		want = e.re.get().FindAllStringSubmatchIndex(s, -1)
	} else {
		for start := 0; start <= len(s); {
			end := lineEnd(s, start)
			if containsAny(lower[start:end], e.hints) {
				for _, m := range e.re.get().FindAllStringSubmatchIndex(s[start:end], -1) {
					want = append(want, shift(m, start))
				}
			}
			start = end + 1
		}
	}
	got := e.matches(s, lower)
	slices.SortFunc(got, func(a, b []int) int { return a[0] - b[0] })
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%s on %q: matches = %v, want %v", e.id, s, got, want)
	}
}
