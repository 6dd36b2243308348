package sensitive

import (
	"strings"
)

// The secret managers' HTTP APIs: reading through them is a secret read,
// as cat .env is. One list for every judge that sees a URL: the HTTP
// tool's, and the shell's for curl, wget and their kin (issue 16).

// SecretAPIPaths are URL path parts of secret managers' APIs.
var SecretAPIPaths = []string{
	"/secrets",              // Kubernetes /api/v1/namespaces/N/secrets[/NAME], Docker Engine /secrets, GCP .../secrets/X/versions/Y:access
	"/v1/secret/",           // Vault KV v1 and the default mount
	"/v1/kv/",               // Vault KV (and Consul KV, which holds configs with passwords)
	"/v1/auth/token/lookup", // Vault token lookups
	"/v1/sys/",              // Vault system backend (but see SecretAPI: sys/health is not)
	"/secretsmanager",       // AWS Secrets Manager behind a proxy
	"/v1/cubbyhole/",        // Vault cubbyhole
	"/computemetadata/v1/instance/service-accounts/", // GCE tokens through a proxy
}

// dumpPaths are debug endpoints that hand out a process's memory or
// environment over HTTP: heap dumps and Spring's env (issue 25).
var dumpPaths = []string{"/debug/pprof/heap", "/debug/pprof/allocs", "/actuator/heapdump", "/actuator/env",
	"/actuator/configprops", "/actuator/threaddump", "/heapdump", "/jolokia"}

// secretAPIHosts are hosts whose whole API reads secrets.
var secretAPIHosts = []string{"secretmanager.googleapis.com"}

// healthPaths are a secret store's health and status endpoints, which
// print no secret (issue 16: vault status is not a secret read).
var healthPaths = []string{"/v1/sys/health", "/v1/sys/seal-status", "/v1/sys/leader", "/v1/sys/ha-status",
	"/v1/sys/version-history", "/v1/status/leader", "/v1/status/peers", "/healthz", "/livez", "/readyz"}

// SecretAPI says why a request to host (lower case, no port) and path
// (unescaped) reads a secret through its manager, or "".
func SecretAPI(host, path string) string {
	host, path = strings.ToLower(host), strings.ToLower(path)
	for _, h := range healthPaths {
		if path == h || strings.HasPrefix(path, h+"?") {
			return ""
		}
	}
	for _, d := range dumpPaths {
		if strings.Contains(path, d) {
			return "dumps a process's memory or environment over HTTP, which holds its secrets"
		}
	}
	for _, s := range SecretAPIPaths {
		if strings.Contains(path, s) {
			return "reads a secret through its manager's API"
		}
	}
	// Vault KV v2: /v1/<mount>/data/<path>.
	if strings.HasPrefix(path, "/v1/") && strings.Contains(path, "/data/") {
		return "reads a secret through its manager's API"
	}
	for _, h := range secretAPIHosts {
		if host == h {
			return "reads a secret through its manager's API"
		}
	}
	if strings.HasPrefix(host, "secretsmanager.") || strings.HasPrefix(host, "vault.") && strings.HasPrefix(path, "/v1/") ||
		strings.HasSuffix(host, ".vault.azure.net") {
		return "reads a secret through its manager's API"
	}
	return ""
}
