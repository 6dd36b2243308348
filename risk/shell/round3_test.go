package shell

import "testing"

// Issue 16, mechanism 6: secrets by mechanism. Other processes'
// environments reached by any path, credential helpers, orchestrator
// secret volumes, secret stores' read verbs; and the look-alikes that
// stay looks.
func TestSecretsByMechanism(t *testing.T) {
	run(t, []tcase{
		{"cd into a pid from a variable", "cd /proc/$PPID && cat environ", danger, "reads a secret"},
		{"cd with a trailing slash", "cd /proc/$PPID/ && cat ./environ", danger, "reads a secret"},
		{"cd in two steps", "cd /proc; cd $PPID; cat environ", danger, "reads a secret"},
		{"pushd", "pushd /proc/$PPID && strings environ", danger, "reads a secret"},
		{"cd in a subshell", "(cd /proc/$PPID && head -c 400 environ)", danger, "reads a secret"},
		{"env -C", "env -C /proc/$PPID cat environ", danger, "reads a secret"},
		{"redirect after cd", "cd /proc/$PPID && tr '\\0' '\\n' < environ", danger, "reads a secret"},
		{"cwd after cd", "cd /proc/$PPID && cat cwd/config.yaml", danger, "reads a secret"},
		{"recursive grep over a pid", "grep -r x /proc/$PPID/", danger, "environment"},
		{"recursive grep over /proc", "grep -r TOKEN /proc", danger, "environment"},
		{"recursive grep over self", "grep -rn TOKEN /proc/self", danger, "environment"},
		{"rg over a pid", "rg TOKEN /proc/1", danger, "environment"},
		{"recursive grep after cd", "cd /proc/$PPID && grep -r TOKEN .", danger, "environment"},
		{"through the cwd link", "cat /proc/$PPID/cwd/config.yaml", danger, ""},
		{"through the root link", "cat /proc/$PPID/root/etc/countersign/config.yaml", danger, ""},
		{"an open file", "cat /proc/1/fd/3", danger, ""},
		{"variable holding the pid directory", "P=/proc/$PPID; cat $P/environ", danger, ""},
		{"redirect from environ", "tr '\\0' '\\n' < /proc/$PPID/environ", danger, ""},
		{"sort of environ", "sort -z /proc/self/environ", danger, ""},
		{"kubelet secret volume", "cat /var/lib/kubelet/pods/abc/volumes/kubernetes.io~secret/db/password", danger, ""},
		{"service account token", "cat /var/run/secrets/kubernetes.io/serviceaccount/token", danger, ""},
		{"docker's container config", "cat /var/lib/docker/containers/abc/config.v2.json", danger, ""},
		{"git credential fill", "printf 'protocol=https\\nhost=github.com\\n' | git credential fill", danger, "credential helper"},
		{"git credential-store", "git credential-store get", danger, "credential helper"},
		{"docker credential helper", "echo https://index.docker.io/v1/ | docker-credential-desktop get", danger, "credential helper"},
		{"git credential helper binary", "git-credential-libsecret get", danger, "credential helper"},
		{"gh auth token", "gh auth token", danger, ""},
		{"aws secret value", "aws secretsmanager get-secret-value --secret-id prod/db", danger, ""},
		{"ssm decrypted", "aws ssm get-parameter --name /prod/db --with-decryption", danger, ""},
		{"ssm by path decrypted", "aws ssm get-parameters-by-path --path /prod --recursive --with-decryption", danger, ""},
		{"ec2 password data", "aws ec2 get-password-data --instance-id i-1", danger, ""},
		{"ecr login password", "aws ecr get-login-password --region eu-west-1", danger, ""},
		{"lambda environment", "aws lambda get-function-configuration --function-name api", danger, ""},
		{"aws configure get", "aws configure get aws_secret_access_key", danger, ""},
		{"gcloud secret access", "gcloud secrets versions access latest --secret db", danger, ""},
		{"gcloud access token", "gcloud auth print-access-token", danger, ""},
		{"gcloud config helper", "gcloud config config-helper --format json", danger, ""},
		{"az key vault", "az keyvault secret show --vault-name v --name db", danger, ""},
		{"az access token", "az account get-access-token", danger, ""},
		{"az storage keys", "az storage account keys list -n acct -g rg", danger, ""},
		{"az app settings", "az webapp config appsettings list -n app -g rg", danger, ""},
		{"vault kv get", "vault kv get secret/prod/db", danger, ""},
		{"vault read", "vault read -field=password secret/db", danger, ""},
		{"kubectl get secret yaml", "kubectl get secret db -n prod -o yaml", danger, ""},

		// Look-alikes that stay looks.
		{"a process's status after cd", "cd /proc/$PPID && cat status", readOnly, ""},
		{"a process's fd count", "ls -l /proc/1234/fd | wc -l", readOnly, ""},
		{"the cwd link itself", "readlink /proc/$PPID/cwd", readOnly, ""},
		{"listing the cwd", "ls /proc/$PPID/cwd/", readOnly, ""},
		{"a process's command line", "cat /proc/$PPID/cmdline | tr '\\0' ' '", readOnly, ""},
		{"kernel tables recursively", "grep -r . /proc/sys/net/ipv4/conf/eth0/", readOnly, ""},
		{"meminfo", "cat /proc/meminfo", readOnly, ""},
		{"ssm plain parameter", "aws ssm get-parameter --name /prod/flag", readOnly, ""},
		{"secret metadata", "aws secretsmanager describe-secret --secret-id prod/db", readOnly, ""},
		{"secret names", "aws secretsmanager list-secrets", readOnly, ""},
		{"password policy", "aws iam get-account-password-policy", readOnly, ""},
		{"key vault names", "az keyvault secret list --vault-name v", readOnly, ""},
		{"gcloud secret names", "gcloud secrets list", readOnly, ""},
		{"vault health", "vault status", readOnly, ""},
		{"secret names in the cluster", "kubectl get secrets -n prod", readOnly, ""},
	})
}
