package tools

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// CappedBuffer is an io.Writer that keeps the first limit bytes written to
// it and counts the rest. Writes never fail, so a process writing into it is
// never blocked or killed by the cap: the excess is read and dropped. It is
// safe for concurrent use (a progress reporter may read while a pipe writes).
type CappedBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	total int64
}

// NewCappedBuffer returns a buffer that keeps at most limit bytes; a limit
// below zero is taken as zero.
func NewCappedBuffer(limit int) *CappedBuffer {
	return &CappedBuffer{limit: max(limit, 0)}
}

// Write keeps what fits under the cap and counts everything. It always
// reports len(p) written and a nil error.
func (b *CappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	if room := b.limit - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns a copy of the kept bytes.
func (b *CappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}

// String returns the kept bytes as text. When the cap cut a multi-byte
// character in half, the broken tail is dropped so the text stays valid UTF-8
// where the input was.
func (b *CappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total > int64(len(b.buf)) {
		return string(TrimPartialRune(b.buf))
	}
	return string(b.buf)
}

// Total is the number of bytes written, kept or not.
func (b *CappedBuffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Truncated reports whether anything was dropped.
func (b *CappedBuffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total > int64(len(b.buf))
}

// Note says, for a truncated buffer, how much of what was shown; "" when
// nothing was dropped. what names the output, e.g. "stdout".
func (b *CappedBuffer) Note(what string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total <= int64(len(b.buf)) {
		return ""
	}
	return TruncationNote(what, b.total, len(b.buf))
}

// TruncationNote is the one wording of a cap: "stdout was 1,048,576 bytes;
// only the first 65,536 are shown".
func TruncationNote(what string, total int64, shown int) string {
	return fmt.Sprintf("%s was %s bytes; only the first %s are shown", what, FormatCount(total), FormatCount(int64(shown)))
}

// CapText cuts s to at most limit bytes on a character boundary and reports
// whether it cut anything.
func CapText(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	return string(TrimPartialRune([]byte(s[:max(limit, 0)]))), true
}

// TrimPartialRune drops an incomplete UTF-8 sequence at the end of p, as left
// by cutting text at a byte count. At most three bytes are dropped.
func TrimPartialRune(p []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(p); i++ {
		c := p[len(p)-i]
		if c < utf8.RuneSelf {
			return p // ASCII: nothing pending before it
		}
		if utf8.RuneStart(c) {
			if r, size := utf8.DecodeRune(p[len(p)-i:]); r == utf8.RuneError && size == 1 {
				return p[:len(p)-i]
			}
			return p
		}
	}
	return p
}

// LooksBinary reports whether p (some content, or its first chunk when cut
// is true) is binary rather than text: it holds a NUL byte, or is not valid
// UTF-8. In a cut chunk an incomplete character at the end is allowed.
func LooksBinary(p []byte, cut bool) bool {
	if bytes.IndexByte(p, 0) >= 0 {
		return true
	}
	if cut {
		p = TrimPartialRune(p)
	}
	return !utf8.Valid(p)
}

// HexPrefix formats up to n leading bytes of p as space-separated hex, for
// summarising binary content.
func HexPrefix(p []byte, n int) string {
	p = p[:min(n, len(p))]
	var sb strings.Builder
	for i, c := range p {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// FormatCount writes n with thousands separators: 1234567 → "1,234,567".
func FormatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

// JoinNotes joins the non-empty notes with "; ".
func JoinNotes(notes ...string) string {
	var kept []string
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	return strings.Join(kept, "; ")
}
