package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/auditsink"
)

// buildAudit wraps the store so that every audit event also goes to the
// sinks of the audit section, failing closed on a required one. The sinks
// are opened (the file created, the table created) only when e.dial, as
// Redis is reached: tests that build without dialling keep the plain store.
func (a *app) buildAudit(ctx context.Context, c auditsink.Config, e env) error {
	c, err := c.WithDefaults()
	if err != nil {
		return err
	}
	a.cfg.Audit = c
	if !e.dial {
		return nil
	}
	sinks, err := c.Open(ctx, auditsink.Stream(a.store, int(a.cfg.Store.AuditMaxLen)), e.getenv)
	if err != nil {
		return err
	}
	for _, s := range sinks {
		a.closer = append(a.closer, s.Sink.Close)
	}
	if len(sinks) == 1 && sinks[0].Name == auditsink.SourceStream {
		return nil // as before sinks: the store's stream alone
	}
	a.store = auditsink.Wrap(a.store, sinks, a.log)
	names := make([]string, len(sinks))
	for i, s := range sinks {
		names[i] = s.Name
		if !s.Required {
			names[i] += " (best effort)"
		}
	}
	a.where += "; audit: " + strings.Join(names, ", ")
	return nil
}

const auditHelp = `Usage: countersign audit tail [-n N] [--follow] [--source S] [--config FILE]
       countersign audit export [--since WHEN] [--channel C] [--user U]
                                [--approval ID] [--source S] [--config FILE]

Reads the audit log back, one JSON object per line: every assessment, card,
click, expiry and execution, oldest first.

tail     the last N events (default 20); --follow then waits for new ones
         until interrupted (the file and the table only).
export   every event that passes all the filters given:
           --since WHEN     a duration back from now (90m, 24h, 7d) or a
                            time (2025-03-01, 2025-03-01T09:00:00Z)
           --channel C      the channel id
           --user U         who acted: the user id
           --approval ID    one approval's whole story

--source is where to read: mysql (audit.mysql), file (audit.file) or stream
(the store's stream, in Redis). The default is the most durable one
configured: mysql, then file, then stream. --config names the configuration
file as for run (default $COUNTERSIGN_CONFIG).
`

// auditMain is `countersign audit`.
func auditMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditHelp)
		return 2
	}
	var (
		fs                       = flag.NewFlagSet("audit "+args[0], flag.ContinueOnError)
		path                     = fs.String("config", "", "YAML configuration file")
		source                   = fs.String("source", "", "mysql, file or stream")
		n                        *int
		follow                   *bool
		since, channel, user, id *string
	)
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, auditHelp)
		return 0
	case "tail":
		n = fs.Int("n", 20, "how many of the latest events")
		follow = fs.Bool("follow", false, "then wait for new events")
	case "export":
		since = fs.String("since", "", "a duration back from now, or a time")
		channel = fs.String("channel", "", "the channel id")
		user = fs.String("user", "", "the user id of who acted")
		id = fs.String("approval", "", "an approval id")
	default:
		fmt.Fprintf(stderr, "countersign audit: unknown command %q: use tail or export\n\n%s", args[0], auditHelp)
		return 2
	}
	if code, done := parseFlags(fs, args[1:], auditHelp, stdout, stderr); done {
		return code
	}
	var f auditsink.Filter
	wait := false
	if n != nil {
		if *n <= 0 {
			fmt.Fprintf(stderr, "countersign audit tail: -n %d: give a positive number of events\n", *n)
			return 2
		}
		f.Last, wait = *n, *follow
	} else {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintf(stderr, "countersign audit export: %v\n", err)
			return 2
		}
		f = auditsink.Filter{Since: t, Channel: *channel, Actor: *user, ApprovalID: *id}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := readAudit(ctx, configPath(*path), *source, f, wait, os.Getenv, stdout); err != nil {
		fmt.Fprintf(stderr, "countersign %s: %v\n", fs.Name(), err)
		return 1
	}
	return 0
}

// readAudit prints the events f matches from source (or the default one),
// then, with follow, the new ones until ctx ends.
func readAudit(ctx context.Context, path, source string, f auditsink.Filter, follow bool, getenv func(string) string, out io.Writer) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	c, err := cfg.Audit.WithDefaults()
	if err != nil {
		return err
	}
	if source == "" {
		source = c.DefaultSource()
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	emit := func(e approval.Event) error { return enc.Encode(&e) }

	var r auditsink.Reader
	switch source {
	case auditsink.SourceStream:
		if follow {
			return errors.New("--follow reads the file or the table, not the stream: configure audit.file or audit.mysql and give --source file or mysql")
		}
		a := &app{cfg: cfg, log: slog.New(slog.DiscardHandler)}
		defer a.close()
		if err := a.buildStore(ctx, cfg.Store, env{getenv: getenv, dial: true}); err != nil {
			return err
		}
		if a.redis == nil {
			return errors.New("the audit stream is in the bot's memory, which this command cannot read: " +
				"set COUNTERSIGN_REDIS_URL (or store.redis_url) as the bot has it, or read a durable sink with --source file or mysql")
		}
		r = auditsink.Stream(a.store, int(a.cfg.Store.AuditMaxLen))
	case auditsink.SourceFile, auditsink.SourceMySQL:
		fr, closer, err := c.OpenReader(ctx, source, getenv)
		if err != nil {
			return err
		}
		defer closer.Close()
		if follow {
			return fr.Follow(ctx, f, emit)
		}
		r = fr
	default:
		return fmt.Errorf("--source %q: use mysql, file or stream", source)
	}
	events, err := r.Read(ctx, f)
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := emit(e); err != nil {
			return err
		}
	}
	return nil
}

// parseSince reads --since: empty (no bound), a duration back from now
// (with d for days), a date, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration back from now (90m, 24h, 7d) or a time (2025-03-01, 2025-03-01T09:00:00Z)", s)
}
