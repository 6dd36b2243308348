// Package assess judges a stream of tool calls, one JSON object a line,
// with a risk policy and writes one verdict a line in the same order: the
// engine of `countersign assess`. Lines are judged in parallel, in
// batches; a line that cannot be read is answered "confirm" with an error.
package assess

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/countersign/countersign/risk"
)

// assessLine is one input line.
type assessLine struct {
	Tool    *string         `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Mode    string          `json:"mode"`
	Channel string          `json:"channel"`
}

// assessAnswer is one output line.
type assessAnswer struct {
	risk.Verdict
	Error string `json:"error,omitempty"`
}

// maxLine caps one input line; a longer line is answered as unreadable.
const maxLine = 4 << 20

// batchSize is how many lines one worker judges at a time.
const batchSize = 256

type batch struct {
	lines      [][]byte // each line's text, or nil for one too long
	numbers    []int    // each line's number in the input
	out        bytes.Buffer
	unreadable int
	done       chan struct{}
}

// Stream judges every line of r and writes the answers to w in order.
// Lines are judged in parallel, in batches. It returns how many lines could
// not be read; err is a read or write error that stopped it.
func Stream(p *risk.Policy, mode risk.Mode, r io.Reader, w io.Writer) (unreadable int, err error) {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *batch, workers)
	ordered := make(chan *batch, 2*workers)
	for range workers {
		go func() {
			for b := range work {
				judgeBatch(p, mode, b)
				close(b.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(ordered)
		defer close(work)
		readErr = readBatches(r, func(b *batch) {
			ordered <- b
			work <- b
		})
	}()
	var writeErr error
	for b := range ordered {
		<-b.done
		unreadable += b.unreadable
		if writeErr == nil {
			_, writeErr = w.Write(b.out.Bytes())
		}
	}
	if readErr != nil {
		return unreadable, fmt.Errorf("read calls: %w", readErr)
	}
	if writeErr != nil {
		return unreadable, fmt.Errorf("write verdicts: %w", writeErr)
	}
	return unreadable, nil
}

// readBatches splits r into batches of non-blank lines and hands each to
// send.
func readBatches(r io.Reader, send func(*batch)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	lineNo := 0
	b := &batch{done: make(chan struct{})}
	flush := func() {
		if len(b.lines) > 0 {
			send(b)
			b = &batch{done: make(chan struct{})}
		}
	}
	for {
		line, tooLong, err := readLine(br)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			flush()
			return err
		}
		if eof && len(line) == 0 && !tooLong {
			flush()
			return nil
		}
		lineNo++
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			if tooLong {
				line = nil
			}
			b.lines = append(b.lines, line)
			b.numbers = append(b.numbers, lineNo)
			if len(b.lines) == batchSize {
				flush()
			}
		}
		if eof {
			flush()
			return nil
		}
	}
}

// readLine returns the next line without its end of line, copied. A line
// longer than maxLine is consumed and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, tooLong, err
	}
}

// judgeBatch judges the lines of b and encodes the answers into b.out.
func judgeBatch(p *risk.Policy, mode risk.Mode, b *batch) {
	enc := json.NewEncoder(&b.out)
	enc.SetEscapeHTML(false)
	for i, line := range b.lines {
		ans := judgeLine(p, mode, line, b.numbers[i])
		if ans.Error != "" {
			b.unreadable++
		}
		if err := enc.Encode(ans); err != nil {
			// A verdict always encodes; keep one line per input regardless.
			b.out.WriteString(`{"decision":"confirm","risk":"medium","rule":"default","reasons":["the verdict could not be written"],"error":"encode verdict"}` + "\n")
		}
	}
}

// judgeLine reads and judges one input line.
func judgeLine(p *risk.Policy, mode risk.Mode, line []byte, lineNo int) assessAnswer {
	if line == nil {
		return unreadableLine(lineNo, fmt.Sprintf("longer than %d bytes", maxLine))
	}
	var in assessLine
	if err := json.Unmarshal(line, &in); err != nil {
		return unreadableLine(lineNo, "cannot read the call: "+err.Error())
	}
	if in.Tool == nil {
		return unreadableLine(lineNo, `"tool" is missing`)
	}
	c := risk.Call{Tool: *in.Tool, Args: in.Args, Channel: in.Channel, Mode: mode}
	if in.Mode != "" {
		m, ok := ParseMode(in.Mode)
		if !ok {
			return unreadableLine(lineNo, fmt.Sprintf(`"mode" %q is not one of strict, guarded, smart`, in.Mode))
		}
		c.Mode = m
	}
	return assessAnswer{Verdict: p.Assess(c)}
}

// ParseMode reads a mode given on the command line or in an input line;
// "" is no mode (the policy's own).
func ParseMode(s string) (risk.Mode, bool) {
	switch m := risk.Mode(s); m {
	case "", risk.Strict, risk.Guarded, risk.Smart:
		return m, true
	}
	return "", false
}

// unreadableLine is the answer to a line that could not be judged: confirm,
// with the line number and why in Error.
func unreadableLine(lineNo int, why string) assessAnswer {
	return assessAnswer{
		Verdict: risk.Verdict{Decision: risk.Confirm, Risk: risk.Medium, Rule: risk.RuleDefault,
			Reasons: []string{"the call could not be read"}},
		Error: fmt.Sprintf("line %d: %s", lineNo, strings.TrimSpace(why)),
	}
}
