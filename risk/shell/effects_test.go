package shell

import (
	"testing"
)

// TestEffectSamples: every row of the effects table holds a sample that
// comes out a danger (or absurd), so adding a CLI is one row and its test.
func TestEffectSamples(t *testing.T) {
	a := newAnalyzer(t)
	for _, row := range effectRows {
		if row.Sample == "" {
			t.Errorf("row %q %q has no sample", row.Tools, row.Words)
			continue
		}
		if got := kind(a.Analyze(row.Sample)); got != danger && got != absurd {
			t.Errorf("sample %q of %s = %v, want a danger", row.Sample, row.Effect, got)
		}
	}
}

// TestEffects: the floor by effect, across the CLIs an on-call engineer
// has, and the looks of the same tools that must stay looks.
func TestEffects(t *testing.T) {
	run(t, []tcase{
		// Kill, stop, restart.
		{"pkill by name", "pkill -f gunicorn", danger, "stops processes"},
		{"kill through a variable", `kill -TERM "$PID"`, danger, "stops processes"},
		{"crictl stop a container", "crictl stop 0f3a9", danger, ""},
		{"nerdctl kill", "nerdctl kill api", danger, ""},
		{"podman pod rm", "podman pod rm -f web", danger, ""},
		{"init script stop", "/etc/init.d/postgresql stop", danger, "stops or restarts"},
		{"rc-service restart", "rc-service nginx restart", danger, ""},
		{"supervisorctl restart", "supervisorctl restart worker:*", danger, ""},
		{"docker compose with a file then down", "docker compose -f prod.yml down -v", danger, ""},
		{"docker with a context then restart", "docker --context prod restart api", danger, ""},
		{"kubectl namespace first then delete", "kubectl -n prod delete pod api-0", danger, ""},
		{"kubectl rollout undo", "kubectl rollout undo deploy/api -n prod", danger, ""},
		{"pg_ctl stop", "pg_ctl -D /var/lib/postgresql/data stop -m fast", danger, ""},
		{"systemctl --now disable", "systemctl disable --now nginx", danger, ""},
		// Power.
		{"ipmitool power cycle", "ipmitool -I lanplus -H bmc -U admin -P x chassis power cycle", danger, "powers off"},
		{"virsh destroy", "virsh destroy web01", danger, ""},
		{"aws reboot instances", "aws --region eu-west-1 ec2 reboot-instances --instance-ids i-1", danger, ""},
		{"az vm restart", "az vm restart -g rg -n vm1", danger, ""},
		{"ansible reboot", "ansible web -m ansible.builtin.reboot", danger, ""},
		// Remove and tear down.
		{"terraform plan -destroy", "terraform plan -destroy -out=d.tfplan", danger, ""},
		{"terraform apply a plan file", "terraform apply d.tfplan", danger, ""},
		{"tofu state rm", "tofu state rm module.db", danger, ""},
		{"pulumi stack rm", "pulumi stack rm prod --yes", danger, ""},
		{"gcloud delete", "gcloud container clusters delete prod --region europe-west1", danger, ""},
		{"aws s3 rm", "aws s3 rm s3://bucket/ --recursive", danger, ""},
		{"docker volume prune", "docker volume prune -f", danger, ""},
		{"helm rollback", "helm rollback api 3 -n prod", danger, ""},
		{"etcdctl del", "etcdctl del --prefix /registry/pods", danger, ""},
		{"vault kv destroy", "vault kv destroy -versions=3 secret/app", danger, ""},
		// Scale to zero and evict.
		{"kubectl scale 0 with a space", "kubectl scale deploy api --replicas 0", danger, "scales"},
		{"docker service scale 0", "docker service scale api=0", danger, ""},
		{"aws ecs desired count 0", "aws ecs update-service --cluster c --service api --desired-count 0", danger, ""},
		{"kubectl cordon", "kubectl cordon node-3", danger, "evicts"},
		{"kubectl taint NoExecute", "kubectl taint node node-3 dedicated=x:NoExecute", danger, ""},
		// Truncate, privilege, firewall, kernel, schedule.
		{"truncate -s0", "truncate -s0 /var/log/app.log", danger, "cuts data short"},
		{"usermod to sudo", "usermod -aG sudo deploy", danger, "privileges"},
		{"kubectl cluster-admin binding", "kubectl create clusterrolebinding me --clusterrole=cluster-admin --user=me", danger, ""},
		{"setenforce 0", "setenforce 0", danger, ""},
		{"iptables policy accept", "iptables -P INPUT ACCEPT", danger, "firewall"},
		{"ufw allow", "ufw allow 22/tcp", danger, ""},
		{"aws security group open", "aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr 0.0.0.0/0", danger, ""},
		{"modprobe -r", "modprobe -r ixgbe", danger, "kernel"},
		{"sysctl -p", "sysctl -p /etc/sysctl.d/99-x.conf", danger, ""},
		{"systemd-run on a calendar", "systemd-run --on-calendar='*:0/5' /usr/local/bin/x", danger, "schedules"},
		// Network shells and history.
		{"ncat --sh-exec", "ncat -l 4444 --sh-exec 'bash -i'", danger, "shell to the network"},
		{"socat exec", "socat tcp-listen:4444,reuseaddr,fork exec:/bin/bash,pty,stderr", danger, ""},
		{"python http.server", "python3 -m http.server 8080", danger, ""},
		{"ssh reverse tunnel", "ssh -fNR 2222:localhost:22 user@relay", danger, ""},
		{"git push delete a branch", "git push origin :release", danger, "history"},
		{"git push +refspec", "git push origin +main", danger, ""},
		{"git filter-repo", "git filter-repo --path secrets --invert-paths", danger, ""},
		{"git -C dir branch -D", `git -C /srv/app branch -D "$OLD"`, danger, ""},
		{"git reflog expire", "git reflog expire --expire=now --all", danger, ""},

		{"redirect alone truncates", "> /var/log/app.log", danger, "empties the file"},
		{"colon truncates", ": > /var/log/nginx/access.log", danger, ""},
		{"echo -n truncates", "echo -n > app.log", danger, ""},
		{"cat /dev/null truncates", "cat /dev/null > /var/log/syslog", danger, ""},
		{"clobber truncates", ">| out.txt", danger, ""},
		{"appending nothing is no truncation", ": >> app.log", unknown, ""},

		// Look-alikes that stay looks.
		{"kubectl get in a namespace called delete", "kubectl get pods -n delete", readOnly, ""},
		{"docker logs of a container called stop", "docker logs stop", readOnly, ""},
		{"systemctl status of a unit", "systemctl status stop.service", readOnly, ""},
		{"git log grep kill", "git log --grep kill", readOnly, ""},
		{"iptables list", "iptables -nvL INPUT", readOnly, ""},
		{"nft list", "nft list ruleset", readOnly, ""},
		{"helm history", "helm history api -n prod", readOnly, ""},
		{"ipmitool chassis status", "ipmitool chassis status", readOnly, ""},
		{"kubectl rollout status", "kubectl rollout status deploy/api", readOnly, ""},
	})
}

// TestUnresolvedWords: a word the assessor cannot resolve withholds
// read-only status and nothing more; verb and option checks still run.
func TestUnresolvedWords(t *testing.T) {
	run(t, []tcase{
		{"git branch -D of a variable", `git branch -D "$OLD"`, danger, "deletes a branch"},
		{"kubectl drain of a variable", `kubectl drain "$NODE" --ignore-daemonsets`, danger, ""},
		{"kubectl delete of a substitution", `kubectl delete pod $(kubectl get pods -o name | head -1)`, danger, ""},
		{"docker rm of a glob", "docker rm -f api-*", danger, ""},
		{"systemctl restart of a variable", `systemctl restart "$SVC"`, danger, ""},
		{"helm uninstall of a variable", `helm uninstall "$REL" -n "$NS"`, danger, ""},
		{"git push --force with a variable remote", `git push --force "$REMOTE" HEAD`, danger, ""},
		{"sed -i after a variable", `sed "$EXPR" -i app.conf`, unknown, ""},
		{"kubectl get of a variable stays not read-only", `kubectl get pods -n "$NS"`, unknown, "cannot tell"},
		{"git log of a variable", `git log "$REF"`, unknown, "cannot tell"},
	})
}
