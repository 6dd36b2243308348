package risk

import "testing"

// TestLongTailRunsAtOnce: through the whole policy, in guarded mode and
// with no risk level from the model, the long tail of on-call reads runs
// at once, the database clients' reads with the SQL rules the policy
// wires in (issue 25); their write and leak forms wait for a person.
func TestLongTailRunsAtOnce(t *testing.T) {
	p := mustPolicy(t, Config{})
	for _, tt := range []struct {
		command string
		want    Decision
	}{
		{`mysql -e 'SHOW REPLICA STATUS\G'`, Auto},
		{`mysql -h db1 -u monitor -pS3cret -e 'SHOW SLAVE STATUS\G'`, Auto},
		{`mariadb -e 'SHOW PROCESSLIST; SELECT 1'`, Auto},
		{`psql -c 'SELECT * FROM pg_stat_replication'`, Auto},
		{`redis-cli -h cache get session:abc`, Auto},
		{`mongosh --quiet --eval 'rs.status()'`, Auto},
		{`argocd app get api`, Auto},
		{`nodetool status`, Auto},
		{`kafka-consumer-groups.sh --bootstrap-server kafka:9092 --describe --group billing`, Auto},
		{`velero backup get`, Auto},
		{`promtool --version`, Auto},
		{`mysql -e 'SHOW REPLICA STATUS\G STOP REPLICA'`, Confirm},
		{`mysql -e 'SELECT 1; DROP TABLE orders'`, Confirm},
		{`psql -c "SELECT pg_read_file('/etc/shadow')"`, Confirm},
		{`redis-cli config get requirepass`, Confirm},
		{`argocd app sync api`, Confirm},
		{`nodetool decommission`, Confirm},
		{`helm get values api`, Confirm},
	} {
		t.Run(tt.command, func(t *testing.T) {
			v := p.Assess(Call{Tool: ToolCommand, Mode: Guarded, Args: mustJSON(t, map[string]string{"command": tt.command})})
			if v.Decision != tt.want {
				t.Fatalf("%s: %s, want %s: %+v", tt.command, v.Decision, tt.want, v)
			}
		})
	}
}
