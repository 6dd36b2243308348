// Package yamlkeys checks a YAML document against the Go type it will be
// decoded into, before decoding, and names each problem by its key path
// with the fix: an unknown key with the nearest known one, a value of the
// wrong kind with an example of the right one.
package yamlkeys

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Check walks a YAML document against the type it decodes into and
// reports every problem (errors.Join), each as an error that names the key path
// ("agent.approval_ttl"): an unknown key with the nearest known one, a
// value of the wrong kind with an example of the right one. The decoder's
// own messages ("field aproval_ttl not found in type agent.Config") name Go
// types, which no operator should need to know.
func Check(doc *yaml.Node, t reflect.Type) error {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.ScalarNode && (doc.Tag == "!!null" || doc.Value == "") {
		return nil // an empty file is the default configuration
	}
	return walk(doc, t, "")
}

var (
	durationType    = reflect.TypeOf(time.Duration(0))
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textType        = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

func walk(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		return walk(n.Alias, t, path)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // an empty value keeps the default
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType) {
		return nil // the type reads itself and names its own errors
	}
	where := path
	if where == "" {
		where = "the configuration"
	}
	switch {
	case t == durationType:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: expected a duration such as 15m, 30s or 1h30m", where)
		}
		if _, err := time.ParseDuration(n.Value); err != nil {
			return fmt.Errorf("%s: %q is not a duration; use %s", where, n.Value, durationExample(n.Value))
		}
		return nil
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: expected a section of keys (%s), got %s", where, strings.Join(firstKeys(t, 3), ", "), describe(n))
		}
		fields := yamlFields(t)
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge key: its values belong here
				errs = append(errs, walk(v, t, path))
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				errs = append(errs, unknownKey(join(path, k.Value), k.Value, fields))
				continue
			}
			errs = append(errs, walk(v, ft, join(path, k.Value)))
		}
		return errors.Join(errs...)
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: expected a map of names to values, got %s", where, describe(n))
		}
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, walk(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)))
		}
		return errors.Join(errs...)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: expected a list, such as [a, b] or lines starting with \"- \", got %s", where, describe(n))
		}
		var errs []error
		for i, c := range n.Content {
			errs = append(errs, walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)))
		}
		return errors.Join(errs...)
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s: expected a single value, got %s", where, describe(n))
	}
	switch t.Kind() {
	case reflect.Bool:
		if _, err := strconv.ParseBool(n.Value); err != nil && n.Tag != "!!bool" {
			return fmt.Errorf("%s: %q is not true or false", where, n.Value)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Tag != "!!int" {
			return fmt.Errorf("%s: %q is not a whole number; use digits only, such as %s", where, n.Value, intExample(n.Value))
		}
	case reflect.Float32, reflect.Float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			return fmt.Errorf("%s: %q is not a number", where, n.Value)
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names what a node holds, for "got ...".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a section of keys"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlFields maps the yaml keys of struct type t (inline fields included)
// to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" || strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range yamlFields(ft) {
				m[k] = v
			}
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // yaml.v3's default
		}
		m[name] = f.Type
	}
	return m
}

// firstKeys lists up to n keys of struct type t, in declaration order.
func firstKeys(t reflect.Type, n int) []string {
	var keys []string
	for k := range yamlFields(t) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > n {
		keys = append(keys[:n], "...")
	}
	return keys
}

// unknownKey is the error for a key no section knows: the nearest known
// key when one is close, else the list of known keys.
func unknownKey(path, key string, fields map[string]reflect.Type) error {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	if best := nearest(key, known); best != "" {
		return fmt.Errorf("%s: unknown key; did you mean %s?", path, best)
	}
	return fmt.Errorf("%s: unknown key; the keys here are %s", path, strings.Join(known, ", "))
}

// nearest is the known key closest to key, when it is close enough to be
// a typo: an edit distance of at most a third of its length (at least 1),
// or the same words in another order or case.
func nearest(key string, known []string) string {
	best, bestD := "", 1<<30
	low := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	for _, k := range known {
		if k == low {
			return k
		}
		d := distance(low, k)
		if d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(1, len(key)/3) {
		return best
	}
	return ""
}

// distance is the Damerau–Levenshtein (optimal string alignment) distance
// between a and b: a swap of two letters counts as one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

var spelledDuration = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)\s*([a-zA-Zµ]+)\.?\s*$`)

// durationExample turns what someone meant ("20 minutes", "2 hrs", "90")
// into the duration to write ("20m", "2h", "90s"), or a general example.
func durationExample(v string) string {
	if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		return strings.TrimSpace(v) + "s (a number needs a unit: ms, s, m or h)"
	}
	if m := spelledDuration.FindStringSubmatch(v); m != nil {
		unit := map[string]string{
			"ms": "ms", "msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
			"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
			"m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
			"h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
		}[strings.ToLower(m[2])]
		if unit != "" {
			return m[1] + unit
		}
		switch strings.ToLower(m[2]) {
		case "d", "day", "days":
			if n, err := strconv.ParseFloat(m[1], 64); err == nil {
				return strconv.FormatFloat(n*24, 'f', -1, 64) + "h (there is no day unit)"
			}
		}
	}
	return "a number and a unit, such as 15m, 30s or 1h30m"
}

// intExample turns "64 KiB" or "1,000" into the plain number to write.
func intExample(v string) string {
	s := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(v), ",", ""), "_", "")
	if m := regexp.MustCompile(`^(\d+)\s*([kKmMgG])i?[bB]?$`).FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		shift := map[string]uint{"k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
		return strconv.FormatInt(n<<shift, 10)
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	return "20"
}
