package adapters

import (
	"regexp"
	"slices"
	"strings"
)

// IDNames rewrites the people and groups that the bot's own words name
// by id ("Needs an approval from @U0BOB or @S0ONCALL") into the names
// people know them by, as each platform learns them. ids finds such a
// token: its first group is the whole token to replace ("@U0BOB"), its
// second the id ("U0BOB"). name returns the id's name, or "" to leave
// the token as it is (a name that cannot be learnt).
//
// Only the words the bot composed change: a message's text, and a
// card's title, state line and reasons. A card's operation is shown byte
// for byte, and pings are Content.Mentions, apart.
func IDNames(c Content, ids *regexp.Regexp, name func(id string) string) Content {
	has := func(s string) bool { return ids.MatchString(s) }
	if !has(c.Text) && (c.Card == nil || !has(c.Card.Title) && !has(c.Card.StateLine) && !slices.ContainsFunc(c.Card.Reasons, has)) {
		return c
	}
	rename := func(s string) string {
		var b strings.Builder
		last := 0
		for _, m := range ids.FindAllStringSubmatchIndex(s, -1) {
			n := name(s[m[4]:m[5]])
			if n == "" {
				continue
			}
			b.WriteString(s[last:m[2]])
			b.WriteString(n)
			last = m[3]
		}
		if last == 0 {
			return s
		}
		b.WriteString(s[last:])
		return b.String()
	}
	c.Text = rename(c.Text)
	if c.Card != nil {
		k := *c.Card
		k.Title, k.StateLine = rename(k.Title), rename(k.StateLine)
		k.Reasons = slices.Clone(k.Reasons)
		for i, r := range k.Reasons {
			k.Reasons[i] = rename(r)
		}
		c.Card = &k
	}
	return c
}
