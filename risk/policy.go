package risk

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/risk/sensitive"
	"github.com/countersign/countersign/risk/shell"
	"github.com/countersign/countersign/risk/sqlrisk"
)

// Policy is a validated policy. Build it once with New; Assess is then pure
// and safe for concurrent use.
//
// Choices the SPEC leaves open, made here:
//   - Malformed arguments (not an object, a required argument missing or of
//     the wrong type, an unknown file operation, a key given twice in any
//     case) are confirmed by rule "default", with a reason naming the
//     argument, before any other rule.
//   - Strict mode (rule "mode") shows the best estimate of the risk: high
//     for a code-level danger or when the LLM said high, else medium.
//   - HTTP: a missing method is GET; a URL that does not parse, has no host
//     or no http(s) scheme is blocked like a forbidden scheme; no method is
//     a code-level danger, only GET, HEAD and OPTIONS are whitelisted, and
//     not when the request carries a body (some APIs act on it), a
//     method-override header (X-HTTP-Method-Override and kin) or a host
//     that is not plain ASCII (the host is mapped as UTS #46 does, NFKC and
//     case folding, before the metadata checks, so 𝟏𝟔𝟗… and ⓜⓔⓣⓐ… are
//     blocked as the metadata endpoint they resolve to; a person sees the
//     rest). Wildcard-DNS names that spell an address (169.254.169.254.nip.io,
//     a9fea9fe.nip.io, fd00-ec2--254.sslip.io) are judged as that address. A
//     request that reads a secret through its manager's API (Kubernetes
//     secrets, Vault, AWS Secrets Manager, SSM and KMS, GCP Secret Manager,
//     Key Vault) is a secret read, a danger whatever the method; a secret
//     store's health endpoint is not (secretRead). A method is not
//     trimmed: the tool refuses " GET", so the policy does too.
//     Private and loopback addresses are left to the tool's dialer.
//   - execute_command: a command name or verb the shell rules cannot read
//     (built at run time, a function or alias the script defines) makes
//     the LLM's low count as absent: the call is confirmed by rule
//     "default", and the card says why (issue 16).
//   - execute_command: a workdir that leaves the root is blocked, like a
//     file path that does; one that holds secrets (.ssh, .aws, .docker) is
//     a danger, since `cat credentials` there reads .aws/credentials.
//   - Files: any operation on a sensitive path is a danger (list .ssh and
//     stat .env too, as the SPEC says), and so is a list of a directory
//     that holds secrets (.aws: it shows their names, as ls .aws would in
//     the shell) and a write or append that plants code to run later
//     (.bashrc, .git/hooks/, authorized_keys).
//   - An unknown mode on a Call is judged as strict, with a reason.
type Policy struct {
	mode      Mode
	toolModes map[string]Mode
	channels  map[string]channelModes
	preauth   map[string]*preauth
	sensitive *sensitive.Matcher
	shell     *shell.Analyzer
	sql       *sqlrisk.Analyzer
	taint     bool               // Config.Taint
	mcp       map[string]MCPTool // by function name; see mcp.go
}

type channelModes struct {
	mode  Mode
	tools map[string]Mode
}

// New validates cfg and builds the policy. An error names the key and the
// problem, e.g. `risk.tools.execute_sql: mode "stric" is not one of strict,
// guarded, smart`.
func New(cfg Config) (*Policy, error) {
	if err := checkMode("risk", cfg.Mode); err != nil {
		return nil, err
	}
	p := &Policy{
		mode:      cmp.Or(cfg.Mode, Smart),
		toolModes: map[string]Mode{},
		channels:  map[string]channelModes{},
		preauth:   map[string]*preauth{},
		taint:     cfg.Taint == nil || *cfg.Taint,
	}
	if err := p.addTools(cfg.Tools); err != nil {
		return nil, err
	}
	if err := p.addChannels(cfg.Channels); err != nil {
		return nil, err
	}
	m, err := sensitive.New(cfg.SensitivePatterns())
	if err != nil {
		return nil, fmt.Errorf("risk.sensitive_paths: %w", err)
	}
	p.sensitive = m
	if p.sql, err = sqlrisk.New(sqlrisk.DefaultSQLMode); err != nil {
		return nil, fmt.Errorf("build sql analyzer: %w", err)
	}
	sqlRead := func(text string) (bool, []string) {
		an := p.sql.Analyze(text)
		return an.ReadOnly && len(an.Danger) == 0, an.Danger
	}
	if p.shell, err = shell.New(shell.Options{Sensitive: m, ForbiddenHost: ForbiddenHost, SQLRead: sqlRead, HTTP: p.httpFloor}); err != nil {
		return nil, fmt.Errorf("build shell analyzer: %w", err)
	}
	return p, nil
}

// addTools validates risk.tools: each tool's mode and pre-authorisations.
func (p *Policy) addTools(tools map[string]ToolConfig) error {
	for _, name := range sortedKeys(tools) {
		key := "risk.tools." + name
		if err := checkToolName("risk.tools", name); err != nil {
			return err
		}
		tc := tools[name]
		if err := checkMode(key, tc.Mode); err != nil {
			return err
		}
		if tc.Mode != "" {
			p.toolModes[name] = tc.Mode
		}
		if len(tc.Preauthorized) > 0 {
			pa, err := compilePreauth(key+".preauthorized", name, tc.Preauthorized)
			if err != nil {
				return err
			}
			p.preauth[name] = pa
		}
	}
	return nil
}

// addChannels validates risk.channels: each channel's mode and its
// per-tool modes.
func (p *Policy) addChannels(channels map[string]ChannelConfig) error {
	for _, id := range sortedKeys(channels) {
		key := "risk.channels." + id
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("risk.channels: a channel id is empty")
		}
		cc := channels[id]
		if err := checkMode(key, cc.Mode); err != nil {
			return err
		}
		cm := channelModes{mode: cc.Mode, tools: map[string]Mode{}}
		for _, name := range sortedKeys(cc.Tools) {
			if err := checkToolName(key+".tools", name); err != nil {
				return err
			}
			m := cc.Tools[name].Mode
			if err := checkMode(key+".tools."+name, m); err != nil {
				return err
			}
			if m != "" {
				cm.tools[name] = m
			}
		}
		p.channels[id] = cm
	}
	return nil
}

// judgement is what the rules of one tool found in a call, before the
// policy's order of rules is applied.
type judgement struct {
	malformed string   // why the arguments cannot be judged; decides alone
	op        string   // the operation text pre-authorisations are matched with
	absurd    []string // rule 1
	danger    []string // rule 4
	readOnly  bool     // rule 6
	why       []string // why it is whitelisted, or why not
	// unvouched says why the LLM's low counts as absent at rule 5: the
	// call holds what the assessor cannot read, or the turn read text
	// from outside (vouch.go).
	unvouched []string
}

func malformed(err error) judgement {
	return judgement{malformed: err.Error()}
}

// Assess judges one call by the rules of SPEC §2, the first that applies
// deciding. It never panics: anything it cannot judge is confirmed.
func (p *Policy) Assess(c Call) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Decision: Confirm, Risk: Medium, Rule: RuleDefault,
				Reasons: []string{"the assessor failed on this call; a person must look at it"}}
		}
	}()
	a, err := parseArgs(c.Args)
	if err != nil {
		return confirmMalformed(err.Error())
	}
	llm, notes := a.riskLevel()
	var extra []string
	if notes != "" {
		extra = append(extra, notes)
	}
	mode, modeNote := p.modeFor(c)
	if modeNote != "" {
		extra = append(extra, modeNote)
	}

	if t, ok := p.mcp[c.Tool]; ok {
		return p.assessMCP(c.Tool, t, a, mode, llm, extra)
	}
	var j judgement
	switch c.Tool {
	case ToolCommand:
		j = p.judgeCommand(a)
	case ToolSQL:
		j = p.judgeSQL(a)
	case ToolFile:
		j = p.judgeFile(a)
	case ToolHTTP:
		j = p.judgeHTTP(a)
	default:
		j = judgeOther(c.Tool, a)
	}
	if j.malformed != "" {
		v = confirmMalformed(j.malformed)
		v.LLMLevel = llm
		return v
	}

	trusted, j := p.vouch(c, llm, j)
	v = p.decide(c.Tool, mode, trusted, j)
	v.LLMLevel = llm
	// The full slice expression makes append copy: reasons may come from an
	// analyzer and must not be written to.
	v.Reasons = append(v.Reasons[:len(v.Reasons):len(v.Reasons)], extra...)
	return v
}

// decide applies rules 1 to 7 to a judged call.
func (p *Policy) decide(tool string, mode Mode, llm Level, j judgement) Verdict {
	// 1. Absurd: blocked in every mode.
	if len(j.absurd) > 0 {
		return Verdict{Decision: Block, Risk: High, Rule: RuleAbsurd, Reasons: j.absurd}
	}
	// 2. Pre-authorised by the operator.
	if pa := p.preauth[tool]; pa != nil {
		if entry, ok := pa.match(j.op); ok {
			return Verdict{Decision: Auto, Risk: Low, Rule: RulePreauthorized,
				Reasons: []string{"pre-authorised by the operator: " + clip(entry)}}
		}
	}
	// 3. Strict mode: everything else waits for a person. The risk shown is
	// still the best estimate.
	if mode == Strict {
		v := Verdict{Decision: Confirm, Risk: Medium, Rule: RuleMode,
			Reasons: []string{"strict mode: every call needs approval"}}
		switch {
		case len(j.danger) > 0:
			v.Risk = High
			v.Reasons = append(v.Reasons, j.danger...)
		case llm == High:
			v.Risk = High
		}
		return v
	}
	// 4. Code-level danger, which the LLM cannot lower.
	if len(j.danger) > 0 {
		v := Verdict{Decision: Confirm, Risk: High, Rule: RuleDanger, Reasons: j.danger}
		if llm == Low {
			v.Reasons = append(v.Reasons, "the assistant's low risk_level does not lower a code-level danger")
		}
		return v
	}
	// 5. The LLM's own rating: it may always raise; it may lower only in
	// smart mode.
	switch llm {
	case High, Medium:
		return Verdict{Decision: Confirm, Risk: llm, Rule: RuleLLM,
			Reasons: []string{"the assistant rated this call " + string(llm) + " risk"}}
	case Low:
		if mode == Smart {
			return Verdict{Decision: Auto, Risk: Low, Rule: RuleLLM,
				Reasons: []string{"the assistant rated this call low risk, which smart mode trusts"}}
		}
	}
	// 6. Whitelisted read-only operation.
	if j.readOnly {
		return Verdict{Decision: Auto, Risk: Low, Rule: RuleWhitelist, Reasons: j.why}
	}
	// 7. Everything else.
	v := Verdict{Decision: Confirm, Risk: Medium, Rule: RuleDefault, Reasons: j.why}
	if llm == Low {
		v.Reasons = append(v.Reasons, "the assistant's low risk_level is not trusted in "+string(mode)+" mode")
	}
	return v
}

// confirmMalformed is the verdict for arguments that cannot be judged.
func confirmMalformed(why string) Verdict {
	return Verdict{Decision: Confirm, Risk: Medium, Rule: RuleDefault,
		Reasons: []string{"malformed call: " + why}}
}

// modeFor resolves the mode of a call: the call's own mode, then the
// channel's per-tool mode, the channel's mode, the global per-tool mode and
// the global mode. An unknown mode on the call is judged as strict.
func (p *Policy) modeFor(c Call) (Mode, string) {
	if c.Mode != "" {
		if validMode(c.Mode) {
			return c.Mode, ""
		}
		return Strict, fmt.Sprintf("mode %q is not strict, guarded or smart; judged as strict", clip(string(c.Mode)))
	}
	if c.Channel != "" {
		if ch, ok := p.channels[c.Channel]; ok {
			if m := ch.tools[c.Tool]; m != "" {
				return m, ""
			}
			if ch.mode != "" {
				return ch.mode, ""
			}
		}
	}
	if m := p.toolModes[c.Tool]; m != "" {
		return m, ""
	}
	return p.mode, ""
}

// judgeCommand applies the shell rules to execute_command.
func (p *Policy) judgeCommand(a args) judgement {
	cmd, err := a.requiredText("command")
	if err != nil {
		return malformed(err)
	}
	workdir, _, err := a.str("workdir")
	if err != nil {
		return malformed(err)
	}
	if err := a.kind("timeout_seconds", '0'); err != nil {
		return malformed(err)
	}
	j := judgement{op: cmd}
	if workdir != "" {
		if why := leavesRoot("workdir", workdir); why != "" {
			j.absurd = append(j.absurd, why)
			return j
		}
		// The shell rules see `cat credentials`, not the .aws it runs in.
		if why, ok := p.sensitive.MatchDir(workdir); ok {
			j.danger = append(j.danger, "the workdir "+why+"; a command run there may read it by its name alone")
		}
	}
	if strings.IndexByte(cmd, 0) >= 0 {
		j.absurd = append(j.absurd, "the command contains a NUL byte")
		return j
	}
	an := p.shell.Analyze(cmd)
	j.absurd = an.Absurd
	// The full slice expression makes append copy: the analyzer's reasons
	// must not be written to.
	j.danger = append(j.danger[:len(j.danger):len(j.danger)], an.Danger...)
	j.readOnly = an.ReadOnly && len(j.danger) == 0 && len(an.Absurd) == 0
	j.unvouched = an.RunTime
	switch {
	case j.readOnly:
		j.why = []string{"every command is a known reader used read-only"}
	case len(an.RunTime) > 0:
		j.why = append(an.RunTime[:len(an.RunTime):len(an.RunTime)], an.Unknown...)
	default:
		j.why = notWhitelisted(an.Unknown, "the command is not a known read-only command")
	}
	return j
}

// judgeSQL applies the SQL rules to execute_sql.
func (p *Policy) judgeSQL(a args) judgement {
	text, err := a.requiredText("sql")
	if err != nil {
		return malformed(err)
	}
	if err := a.kind("database", '"'); err != nil {
		return malformed(err)
	}
	an := p.sql.Analyze(text)
	j := judgement{op: text, danger: an.Danger, unvouched: an.RunTime}
	j.readOnly = an.ReadOnly && len(an.Danger) == 0
	if j.readOnly {
		j.why = []string{"a single read-only statement"}
	} else {
		j.why = notWhitelisted(an.Unknown, "the statement is not a plain read")
	}
	return j
}

// judgeOther judges a tool the policy has no rules for: never whitelisted.
func judgeOther(tool string, a args) judgement {
	if strings.TrimSpace(tool) == "" {
		return malformed(fmt.Errorf("the tool name is empty"))
	}
	return judgement{
		op:  a.compactWithout(riskLevelKey),
		why: []string{fmt.Sprintf("%s is not a tool with read-only rules", clip(tool))},
	}
}

// notWhitelisted returns the analyzer's reasons, or fallback when it gave
// none.
func notWhitelisted(unknown []string, fallback string) []string {
	if len(unknown) == 0 {
		return []string{fallback}
	}
	return unknown
}

// httpFloor judges a request made through the shell (curl, wget, HTTPie)
// by the HTTP rules, and returns why they block or confirm it (issue 25:
// judged as http_request is). Whether it is a read is not asked: HTTP
// through the shell is never whitelisted.
func (p *Policy) httpFloor(r shell.HTTPRequest) []string {
	call := map[string]any{"method": r.Method, "url": r.URL}
	if len(r.Headers) > 0 {
		call["headers"] = r.Headers
	}
	raw, err := json.Marshal(call)
	if err != nil {
		return []string{"the request cannot be judged: " + err.Error()}
	}
	a, err := parseArgs(raw)
	if err != nil {
		return []string{"the request cannot be judged: " + err.Error()}
	}
	j := p.judgeHTTP(a)
	if j.malformed != "" {
		return nil // a URL the HTTP tool could not take is the shell's to judge
	}
	return append(j.absurd[:len(j.absurd):len(j.absurd)], j.danger...)
}
