package shell

import "testing"

// TestSecretsAsAPersonWould (issue 11, mechanism 6): one list for the
// shell and the file tool, backups and copies, computed path parts,
// env -C, raw devices on stdin, recursive readers and secret managers.
func TestSecretsAsAPersonWould(t *testing.T) {
	run(t, []tcase{
		{"env backup", "cat .env.bak", danger, ""},
		{"credentials copy", "cat ~/.aws/credentials.orig", danger, ""},
		{"key editor copy", "cat ~/.ssh/id_ed25519~", danger, ""},
		{"shadow dash copy", "cat /etc/shadow-", danger, ""},
		{"emacs lock copy", "cat .#.env", danger, ""},
		{"keytab", "strings /etc/krb5.keytab", danger, ""},
		{"kerberos cache", "cat /tmp/krb5cc_1000", danger, ""},
		{"wireguard", "cat /etc/wireguard/wg0.conf", danger, ""},
		{"ovpn", "cat client.ovpn", danger, ""},
		{"kubelet pki", "cat /var/lib/kubelet/pki/kubelet-client-current.pem", danger, ""},
		{"k3s token", "cat /var/lib/rancher/k3s/server/node-token", danger, ""},
		{"k3s kubeconfig", "cat /etc/rancher/k3s/k3s.yaml", danger, ""},
		{"letsencrypt", "cat /etc/letsencrypt/accounts/acme-v02.api.letsencrypt.org/directory/x/private_key.json", danger, ""},
		{"traefik acme", "jq . /data/acme.json", danger, ""},
		{"podman auth", "cat ${XDG_RUNTIME_DIR}/containers/auth.json", danger, ""},
		{"aws sso cache", "cat ~/.aws/sso/cache/abc.json", danger, ""},
		{"vault pass", "cat ~/.vault_pass.txt", danger, ""},
		{"sa json", "cat prod-service_account.json", danger, ""},
		{"pg service", "cat ~/.pg_service.conf", danger, ""},
		{"wp-config", "grep DB_PASSWORD /var/www/html/wp-config.php", danger, ""},
		{"rails database.yml", "cat config/database.yml", danger, ""},
		{"a variable under .ssh", "cat ~/.ssh/$KEY", danger, "computed at run time"},
		{"a variable before .env", `cat "$APP"/.env`, danger, ""},
		{"env -C into .aws", "env -C ~/.aws cat credentials", danger, ""},
		{"proc environ of any pid", "cat /proc/$(pgrep api)/environ", danger, ""},
		{"raw disk through a redirect", "strings < /dev/sda", danger, "raw disk"},
		{"grep -r in ~/.ssh", "grep -r BEGIN ~/.ssh", danger, ""},
		{"grep -r in /etc", "grep -rn password /etc", danger, "every file"},
		{"rg in home", "rg -i token ~", danger, ""},
		{"vault kv get", "vault kv get -field=password secret/db", danger, "manager"},
		{"aws secretsmanager", "aws --region eu-west-1 secretsmanager get-secret-value --secret-id prod", danger, ""},
		{"ssm decryption", "aws ssm get-parameter --name /prod/db --with-decryption", danger, ""},
		{"gcloud secrets", "gcloud secrets versions access latest --secret db", danger, ""},
		{"terraform state pull", "terraform state pull | jq .", danger, ""},
		{"sops -d", "sops -d secrets.enc.yaml", danger, ""},
		{"kubectl secret jsonpath", "kubectl get secret db -n prod -o jsonpath='{.data}'", danger, ""},

		// Look-alikes.
		{"a bak of a plain file", "cat nginx.conf.bak", readOnly, ""},
		{"grep -r in the app", "grep -rn TODO src/", readOnly, ""},
		{"grep -r in nginx config", "grep -rn server_name /etc/nginx/sites-enabled", readOnly, ""},
		{"a variable log file", `tail -n 50 /var/log/$APP.log`, readOnly, ""},
		{"kubectl get secrets names", "kubectl get secrets -n prod", readOnly, ""},
		{"ls .aws", "stat ~/.aws", readOnly, ""},
	})
}
