package shell

import (
	"strings"
)

// The cloud CLIs' reads (issue 16, mechanism 9): aws describe-*, list-*,
// get-*, s3 ls, logs tail, sts get-caller-identity; gcloud list,
// describe, logging read; az list, show. They run at once, except the
// verbs that print secrets or tokens (secret values, decrypted
// parameters, passwords, access tokens, account keys, app settings),
// which are secret reads: a danger. Teardown and the other effects are
// rows of effects.go, matched before this runs.

// cloudValued are the global options of aws, gcloud and az that take the
// next word as their value. doctl, hcloud and fly are reader rows with
// verb paths (observability.go).
var cloudValued = map[string]bool{"--region": true, "--profile": true, "--output": true, "-o": true,
	"--endpoint-url": true, "--query": true, "--color": true, "--ca-bundle": true, "--cli-read-timeout": true,
	"--cli-connect-timeout": true, "--project": true, "--account": true, "--configuration": true,
	"--format": true, "--filter": true, "--limit": true, "--zone": true, "--subscription": true, "-g": true,
	"--resource-group": true, "-n": true, "--name": true, "--page-size": true, "--sort-by": true,
	"--impersonate-service-account": true, "--verbosity": true, "--context": true, "--location": true}

// cloudOperands returns the words of a cloud CLI's command line that are
// not options or their values, up to the first option that is not
// known when known is false.
func cloudOperands(args []arg) (ops []arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.isOption() {
			if cloudValued[a.text] && !strings.Contains(a.text, "=") {
				i++
			}
			continue
		}
		ops = append(ops, a)
	}
	return ops
}

// secretWords in an aws get-* verb or a gcloud or az command path mean
// it prints a secret or a token.
var secretWords = []string{"password", "token", "credential", "secret-value", "login", "access-details", "key-pair",
	"connection-string", "keys", "list-keys", "admin-key", "query-key", "appsettings", "publishing", "generate-sas",
	"access-key", "print-access", "print-identity", "config-helper", "session-token", "federation-token", "decrypt"}

// printsSecret reports whether a cloud verb path word prints a secret.
func printsSecret(w string) bool {
	w = strings.ToLower(w)
	if strings.Contains(w, "password-policy") || strings.Contains(w, "password-last-used") {
		return false
	}
	for _, s := range secretWords {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// cloudCLI judges aws, gcloud and az.
func cloudCLI(j *judge, c *cmd) {
	if j.hadEffect {
		return // an effect row said what it does: one reason per effect
	}
	ops := cloudOperands(c.args)
	// The command path: aws SERVICE OPERATION; gcloud and az GROUP... VERB.
	for i, o := range ops {
		w := strings.ToLower(o.text)
		if i == 2 && c.name == "aws" || in(w, gcloudReads...) || in(w, "show", "read") || strings.HasPrefix(w, "list-") || strings.HasPrefix(w, "describe-") || strings.HasPrefix(w, "get-") {
			break
		}
		if destructiveVerb(o.text) {
			j.danger(c.name + " " + o.text + " tears down cloud resources")
			return
		}
	}
	if len(ops) > 0 && ops[0].dynamic || len(ops) > 1 && ops[1].dynamic {
		j.runTime(c.shown + ": the cloud command is built at run time, so what it does cannot be read")
		return
	}
	if !c.trusted {
		j.unknown("unknown command " + c.shown)
		return
	}
	var why string
	switch c.name {
	case "aws":
		why = j.awsRead(c, ops)
	case "gcloud":
		why = j.gcloudRead(c, ops)
	case "az":
		why = j.azRead(c, ops)
	default:
		why = c.name + " calls a cloud API"
	}
	if why != "" {
		j.unknown(why)
	}
}

// awsRead: aws [options] SERVICE OPERATION.
func (j *judge) awsRead(c *cmd, ops []arg) string {
	if len(ops) < 2 {
		return "aws calls a cloud API"
	}
	svc, op := strings.ToLower(ops[0].text), strings.ToLower(ops[1].text)
	switch {
	case svc == "ssm" && strings.HasPrefix(op, "get-parameter"):
		if hasAnyOpt(c.args, "--with-decryption") {
			j.danger("aws ssm " + op + " --with-decryption prints a secret")
		}
		return ""
	case svc == "configure" && in(op, "get", "export-credentials"):
		j.danger("aws configure " + op + " prints the account's credentials")
		return ""
	case svc == "lambda" && in(op, "get-function", "get-function-configuration"):
		j.danger("aws lambda " + op + " prints the function's environment, which holds secrets")
		return ""
	case svc == "apigateway" && strings.HasPrefix(op, "get-api-key") && hasAnyOpt(c.args, "--include-value --include-values"):
		j.danger("aws apigateway " + op + " --include-values prints API keys")
		return ""
	case (strings.HasPrefix(op, "get-") || strings.HasPrefix(op, "generate-") || strings.HasPrefix(op, "batch-get-")) && printsSecret(op):
		j.danger("aws " + svc + " " + op + " prints a secret or a token")
		return ""
	case svc == "s3api" && op == "get-object", svc == "s3api" && op == "get-object-torrent":
		return "aws s3api " + op + " downloads an object into a file"
	case svc == "configure" && op == "list", svc == "s3" && op == "ls", svc == "logs" && op == "tail" && !hasAnyOpt(c.args, "--follow"),
		strings.HasPrefix(op, "describe-"), strings.HasPrefix(op, "list-"), strings.HasPrefix(op, "get-"),
		svc == "s3api" && strings.HasPrefix(op, "head-"), op == "filter-log-events", op == "lookup-events":
		return ""
	}
	return "aws " + svc + " " + op + " is not a look"
}

// gcloudReads end a gcloud command path that only reads.
var gcloudReads = []string{"list", "describe", "get-iam-policy", "get-value", "info", "version", "get-server-config",
	"list-tags", "list-grantable-roles", "search-all-resources"}

// gcloudRead: gcloud GROUP... VERB [NAME]; gcloud logging read.
func (j *judge) gcloudRead(c *cmd, ops []arg) string {
	for i, o := range ops {
		w := strings.ToLower(o.text)
		if printsSecret(w) || i > 0 && w == "access" && strings.EqualFold(ops[i-1].text, "versions") {
			j.danger("gcloud " + joinOps(ops[:i+1]) + " prints a secret or a token")
			return ""
		}
		if in(w, gcloudReads...) || w == "read" && i > 0 && strings.EqualFold(ops[i-1].text, "logging") {
			return ""
		}
		if i == 0 && w == "version" {
			return ""
		}
	}
	return "gcloud " + joinOps(ops) + " is not a look"
}

// azRead: az GROUP... list|show|list-*|show-*.
func (j *judge) azRead(c *cmd, ops []arg) string {
	for i, o := range ops {
		w := strings.ToLower(o.text)
		if printsSecret(w) || w == "secret" && i+1 < len(ops) && in(strings.ToLower(ops[i+1].text), "show", "download") ||
			w == "get-access-token" {
			j.danger("az " + joinOps(ops[:min(i+2, len(ops))]) + " prints a secret or a token")
			return ""
		}
		if (in(w, "list", "show") || strings.HasPrefix(w, "list-") || strings.HasPrefix(w, "show-") || w == "get-instance-view") && i > 0 {
			return ""
		}
		if i == 0 && in(w, "version", "account") && len(ops) == 1 {
			return ""
		}
	}
	return "az " + joinOps(ops) + " is not a look"
}

func joinOps(ops []arg) string {
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = o.text
	}
	return strings.Join(parts, " ")
}
