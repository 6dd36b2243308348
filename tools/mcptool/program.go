package mcptool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/tools/fence"
	"github.com/countersign/countersign/tools/shelltool"
)

// A stdio server's program runs as the command tool's commands do
// (shelltool.StartProgram): as the command tool's user (Options.RunAs:
// nobody for a bot running as root), so it cannot read the bot's
// environment, memory or configuration; in a process group led by a
// guard, with parent-death signals, so it dies with the bot, even one
// killed with -9; recorded as the bot's own, so the leftover sweep after
// each shell command leaves it alone; and, unless the operator says
// otherwise (Options.Fence false, mcp.servers.<name>.unfenced), fenced by
// the kernel: no writes but in its own temporary folder (its TMPDIR and
// HOME) and the folders of mcp.servers.<name>.write, and no set-user-ID
// gain. It keeps the network: many servers are clients of an API.

// program is one run of a stdio server's program; it is the session's
// transport.
type program struct {
	cmd    *exec.Cmd
	cred   *syscall.Credential
	spec   *fence.Spec
	tmp    string
	prog   *shelltool.Program
	exited chan struct{} // closed once the program is reaped
}

var _ mcp.Transport = (*program)(nil)

// program prepares cmd to run as the server's program.
func (s *server) program(cmd *exec.Cmd) (*program, error) {
	p := &program{cmd: cmd, exited: make(chan struct{})}
	if s.opts.RunAs != "" {
		cred, err := shelltool.ParseRunAs(s.opts.RunAs)
		if err != nil {
			return nil, fmt.Errorf("the command tool's run_as %q: %w", s.opts.RunAs, err)
		}
		p.cred = cred
	}
	tmp, err := os.MkdirTemp("", "countersign-mcp-"+s.name+"-")
	if err != nil {
		return nil, fmt.Errorf("making the server's temporary folder: %w", err)
	}
	if p.tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("making the server's temporary folder: %w", err)
	}
	if p.cred != nil && int(p.cred.Uid) != os.Geteuid() {
		if err := os.Chown(p.tmp, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			_ = os.RemoveAll(p.tmp)
			return nil, fmt.Errorf("giving the server's temporary folder to uid %d: %w", p.cred.Uid, err)
		}
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+p.tmp)
	fenced := s.opts.Fence && !s.cfg.Unfenced
	if fenced || p.cred != nil {
		// The bot's home is not the server's to write (npx keeps its
		// cache there).
		cmd.Env = append(cmd.Env, "HOME="+p.tmp)
	}
	if fenced {
		p.spec = &fence.Spec{Write: append([]string{p.tmp}, s.cfg.Write...)}
	}
	return p, nil
}

// Connect starts the program and speaks MCP over its standard input and
// output.
func (p *program) Connect(ctx context.Context) (mcp.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p.cmd.Stdin, p.cmd.Stdout = inR, outW
	prog, err := shelltool.StartProgram(p.cmd, p.cred, p.spec)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p.prog = prog
	go func() {
		_ = p.cmd.Wait()
		prog.Release()
		close(p.exited)
	}()
	return (&mcp.IOTransport{Reader: outR, Writer: inW}).Connect(ctx)
}

// stop kills the program and what it started, waits until it is reaped,
// and removes its temporary folder.
func (p *program) stop() {
	if p == nil {
		return
	}
	if p.prog != nil {
		p.prog.Kill()
		<-p.exited
	}
	_ = os.RemoveAll(p.tmp)
}

// pid is the program's process id, 0 before it started.
func (p *program) pid() int {
	if p == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}
