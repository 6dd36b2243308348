package shelltool

import "sync"

// tailBuffer keeps the last bytes written to it, for progress reports.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(n int) *tailBuffer { return &tailBuffer{max: n} }

func (b *tailBuffer) Write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
}

// String returns the tail, starting on a character boundary.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.buf
	for i := 0; i < 3 && len(p) > 0 && p[0]&0xC0 == 0x80; i++ {
		p = p[1:]
	}
	return string(p)
}
