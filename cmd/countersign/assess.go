package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/countersign/countersign/risk"
)

const assessHelp = `Usage: countersign assess [--config FILE] [--mode strict|guarded|smart]

Judges tool calls without running them, and without touching any server.

Input (standard input): one JSON object a line,
  {"tool": "execute_command", "args": {"command": "ls -la"}, "mode": "guarded", "channel": "C123"}
  tool     execute_command, execute_sql, file_operations, http_request, or any other name
  args     the call's arguments, including the LLM's risk_level when it gave one
  mode     optional: strict, guarded or smart, for this call only
  channel  optional: applies that channel's overrides from the config
Other fields are ignored, so the peer corpora can be piped in as they are.
Blank lines are skipped.

Output (standard output): one JSON object a line, in the order of the input,
  {"decision":"auto|confirm|block","risk":"low|medium|high",
   "rule":"absurd|preauthorized|mode|danger|llm|whitelist|default","reasons":["..."]}
with "llm_level" when the call carried a valid risk_level. A line that cannot
be read still gets an answer: "decision":"confirm" with an "error" field, and
the exit status is then 1. Exit status 2 means a bad flag or config.

The rules, the first that applies deciding:
  1 absurd         block: rm -rf /, mkfs on a disk, fork bombs, non-http(s) URLs,
                   cloud metadata and link-local addresses, paths that leave the root
  2 preauthorized  auto: operations listed in the config (exact text or "re:" pattern)
  3 mode           confirm: strict mode confirms everything else
  4 danger         confirm (high): recursive rm, kill, DROP, DELETE without WHERE,
                   secrets, ... whatever the LLM says
  5 llm            the LLM's risk_level: high/medium confirm; low runs in smart mode,
                   is ignored in guarded mode
  6 whitelist      auto: read-only commands, one plain read statement, GET/HEAD/OPTIONS,
                   file read/list/exists/stat
  7 default        confirm (medium): everything else, unknown tools included

Flags:
  --config FILE    YAML file; only its "risk:" section is read, e.g.
                     risk:
                       mode: guarded
                       tools:
                         execute_command:
                           preauthorized: ["systemctl restart nginx", "re:ls( .*)?"]
                       channels:
                         C0PROD: {mode: strict}
  --mcp            start the MCP servers of the config's "mcp:" section to list
                   their tools (none is called), so that a call of one, by its
                   function name ({"tool":"fs__write_file",...}), is judged by the
                   MCP rules (operator setting, trusted read-only hint,
                   destructive hints). Without it, the tools a server lists in
                   the config (mcp.servers.NAME.tools) are judged so, and any
                   other call is an unknown tool's
  --mode MODE      the mode of every call that does not carry its own "mode";
                   it overrides the config's global, per-tool and per-channel modes
`

// assessMain is `countersign assess`.
func assessMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("assess", flag.ContinueOnError)
	configPath := fs.String("config", "", "YAML configuration file")
	mode := fs.String("mode", "", "strict, guarded or smart")
	withMCP := fs.Bool("mcp", false, "start the configured MCP servers to list their tools")
	if code, done := parseFlags(fs, args, assessHelp, stdout, stderr); done {
		return code
	}
	m, ok := parseMode(*mode)
	if !ok {
		fmt.Fprintf(stderr, "countersign assess: --mode %q is not one of strict, guarded, smart\n", *mode)
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "countersign assess: %v\n", err)
		return 2
	}
	policy, err := risk.New(cfg.Risk)
	if err != nil {
		fmt.Fprintf(stderr, "countersign assess: config: %v\n", err)
		return 2
	}
	if policy, err = assessWithMCP(context.Background(), cfg, policy, *withMCP, stderr); err != nil { // mcp.go
		fmt.Fprintf(stderr, "countersign assess: config: %v\n", err)
		return 2
	}
	if os.Getenv("GOGC") == "" {
		// Every call leaves short-lived parse trees behind and the live heap
		// stays small (a few batches), so a larger GC target buys about a
		// third more calls per CPU second for a few megabytes.
		debug.SetGCPercent(400)
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	unreadable, err := assessStream(policy, m, stdin, out)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(stderr, "countersign assess: %v\n", err)
		return 1
	}
	if unreadable > 0 {
		fmt.Fprintf(stderr, "countersign assess: %d line(s) could not be read\n", unreadable)
		return 1
	}
	return 0
}

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

// assessStream judges every line of r and writes the answers to w in order.
// Lines are judged in parallel, in batches. It returns how many lines could
// not be read; err is a read or write error that stopped it.
func assessStream(p *risk.Policy, mode risk.Mode, r io.Reader, w io.Writer) (unreadable int, err error) {
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
		m, ok := parseMode(in.Mode)
		if !ok {
			return unreadableLine(lineNo, fmt.Sprintf(`"mode" %q is not one of strict, guarded, smart`, in.Mode))
		}
		c.Mode = m
	}
	return assessAnswer{Verdict: p.Assess(c)}
}

// parseMode reads a mode given on the command line or in an input line;
// "" is no mode (the policy's own).
func parseMode(s string) (risk.Mode, bool) {
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
