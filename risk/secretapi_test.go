package risk

import "testing"

// TestSecretManagerAPIs: reading a secret through a secret manager's HTTP
// API is a secret read (issue 16, mechanism 6), whatever the method; the
// look-alikes (health, listings, metadata, other APIs) are not.
func TestSecretManagerAPIs(t *testing.T) {
	p := mustPolicy(t, Config{})
	const reads = "reads a secret"
	post := want{decision: Confirm, risk: Medium, rule: RuleDefault}
	cases := []policyCase{
		// Vault.
		{name: "vault kv v1", args: `{"url":"https://vault.example.com/v1/secret/db"}`, want: with(danger, reads)},
		{name: "vault kv v2 on another mount", args: `{"url":"https://10.0.0.5:8200/v1/apps/data/billing"}`, want: with(danger, reads)},
		{name: "vault kv v2 on any host", args: `{"url":"https://secrets.internal/v1/team-a/data/db?version=2"}`, want: with(danger, reads)},
		{name: "vault dynamic credentials", args: `{"url":"https://secrets.internal/v1/database/creds/readonly"}`, want: with(danger, reads)},
		{name: "vault cubbyhole", args: `{"url":"https://vault.internal/v1/cubbyhole/x"}`, want: with(danger, reads)},
		{name: "vault unwrap", args: `{"method":"POST","url":"https://secrets.internal/v1/sys/wrapping/unwrap"}`, want: with(danger, reads)},
		{name: "vault transit decrypt", args: `{"method":"POST","url":"https://vault.example.com/v1/transit/decrypt/app","body":"{}"}`, want: with(danger, reads)},
		{name: "vault pki issue", args: `{"method":"POST","url":"https://10.1.1.1:8200/v1/pki/issue/web","body":"{}"}`, want: with(danger, reads)},
		{name: "vault other path on a vault host", args: `{"url":"https://vault.example.com/v1/auth/approle/role/app/secret-id"}`, want: with(danger, reads)},
		{name: "encoded path", args: `{"url":"https://vault.example.com/v1/secret%2Fdb"}`, want: with(danger, reads)},
		{name: "consul kv", args: `{"url":"http://consul.internal:8500/v1/kv/app/config?recurse"}`, want: with(danger, reads)},
		// Health endpoints are not secret reads.
		{name: "vault health", args: `{"url":"https://vault.example.com/v1/sys/health"}`, want: autoWL},
		{name: "vault health with query", args: `{"url":"https://vault.example.com/v1/sys/health?standbyok=true"}`, want: autoWL},
		{name: "vault seal status", args: `{"url":"https://10.0.0.5:8200/v1/sys/seal-status"}`, want: autoWL},
		{name: "vault leader", args: `{"method":"HEAD","url":"https://vault.example.com/v1/sys/leader/"}`, want: autoWL},
		{name: "consul health", args: `{"url":"http://consul.internal:8500/v1/health/service/web"}`, want: autoWL},
		{name: "export on another api", args: `{"url":"https://api.example.com/v1/reports/export/csv"}`, want: autoWL},

		// AWS, by the operation header.
		{name: "secrets manager get", args: `{"method":"POST","url":"https://secretsmanager.eu-west-1.amazonaws.com/","headers":{"X-Amz-Target":"secretsmanager.GetSecretValue"},"body":"{\"SecretId\":\"db\"}"}`,
			want: with(danger, "reads a secret value")},
		{name: "secrets manager batch get, lower-case header", args: `{"method":"POST","url":"https://secretsmanager.us-east-1.amazonaws.com/","headers":{"x-amz-target":"secretsmanager.BatchGetSecretValue"},"body":"{}"}`,
			want: with(danger, "reads a secret value")},
		{name: "ssm parameter through a proxy", args: `{"method":"POST","url":"https://aws-proxy.internal/","headers":{"X-Amz-Target":"AmazonSSM.GetParameter"},"body":"{\"WithDecryption\":true}"}`,
			want: with(danger, "reads a secret value")},
		{name: "kms decrypt", args: `{"method":"POST","url":"https://kms.eu-west-1.amazonaws.com/","headers":{"X-Amz-Target":"TrentService.Decrypt"},"body":"{}"}`,
			want: with(danger, "reads a secret value")},
		{name: "secrets manager without a target", args: `{"url":"https://secretsmanager.eu-west-1.amazonaws.com/"}`, want: with(danger, reads)},
		{name: "secrets manager list", args: `{"method":"POST","url":"https://secretsmanager.eu-west-1.amazonaws.com/","headers":{"X-Amz-Target":"secretsmanager.ListSecrets"},"body":"{}"}`,
			want: post},
		{name: "ssm describe", args: `{"method":"POST","url":"https://ssm.eu-west-1.amazonaws.com/","headers":{"X-Amz-Target":"AmazonSSM.DescribeParameters"},"body":"{}"}`,
			want: post},

		// GCP.
		{name: "gcp access", args: `{"url":"https://secretmanager.googleapis.com/v1/projects/p/secrets/db/versions/latest:access"}`, want: with(danger, reads)},
		{name: "gcp regional access", args: `{"url":"https://europe-west1-secretmanager.googleapis.com/v1/projects/p/locations/europe-west1/secrets/db/versions/3:access"}`, want: with(danger, reads)},
		{name: "gcp list", args: `{"url":"https://secretmanager.googleapis.com/v1/projects/p/secrets"}`, want: autoWL},
		{name: "gcp metadata of a version", args: `{"url":"https://secretmanager.googleapis.com/v1/projects/p/secrets/db/versions/3"}`, want: autoWL},

		// Azure Key Vault.
		{name: "key vault secret", args: `{"url":"https://prod-kv.vault.azure.net/secrets/db-password?api-version=7.4"}`, want: with(danger, reads)},
		{name: "key vault secret version", args: `{"url":"https://prod-kv.vault.azure.net/secrets/db-password/0123abcd?api-version=7.4"}`, want: with(danger, reads)},
		{name: "key vault public key", args: `{"url":"https://prod-kv.vault.azure.net/keys/signing?api-version=7.4"}`, want: autoWL},

		// Kubernetes.
		{name: "kubernetes secret", args: `{"url":"https://10.0.0.1:6443/api/v1/namespaces/prod/secrets/db"}`, want: with(danger, reads)},
		{name: "kubernetes pods", args: `{"url":"https://10.0.0.1:6443/api/v1/namespaces/prod/pods"}`, want: autoWL},

		// The model cannot lower it.
		{name: "low does not lower a vault read", args: `{"url":"https://vault.example.com/v1/secret/db","risk_level":"low"}`, want: llm(with(danger, reads), Low)},
	}
	for i := range cases {
		cases[i].tool = ToolHTTP
	}
	runCases(t, p, cases)
}
