package shell

import (
	"strings"
)

// The long tail of reads (issue 25, item 2): the observability, GitOps,
// backup, cluster-store and smaller cloud CLIs an on-call engineer runs to
// look. Each is a reader row of the one shape (verb paths, options that
// write, samples to accept and refuse); TestReaderSamples runs the
// samples and TestGeneratedRefusals puts destructive verbs after every
// verb group. Verbs that print secrets are left off the paths, so they
// get a card: mimirtool alertmanager get (the stored configuration, with
// receiver passwords), doctl databases get|connection|user (connection
// strings with the password), doctl kubernetes cluster kubeconfig, hcloud
// reset-password and enable-rescue (a root password), fly auth token.

// never is the reason of the options that follow or watch forever: a
// call that never ends is not a look (see watch).
const never = "never ends (it follows or watches)"

func tailReaders() map[string]reader {
	kafka := func(name, needs string) reader {
		look := name + " --bootstrap-server kafka:9092"
		if f := strings.Fields(needs); len(f) > 0 {
			look += " " + f[0]
		}
		return r(kafkaValued, kafkaDeny, "changes topics, groups, offsets or ACLs").withCheck(kafkaCheck(needs)).
			samples([]string{look}, name+" --bootstrap-server k:9092 --delete --topic t", name+" --bootstrap-server k:9092 --alter", name+" --bootstrap-server k:9092 --describe --reset-offsets --execute", name+" --bootstrap-server k:9092 x")
	}
	fly := r("-a --app -c --config -o --org -r --region -i --instance --machine -t --access-token -n --lines", "-f --follow", never).
		withVerbs("help, status, logs, releases, version, doctor, apps list, machines|machine|m list|status, regions list, volumes|volume|vol list|show, "+
			"secrets list, checks list, scale show, ips list, certs list|show, orgs list, image show, services list, platform regions|vm-sizes|status, config show|validate").
		samples([]string{"fly status -a api", "fly machines list -a api", "fly secrets list -a api", "flyctl logs -a api --no-tail"},
			"fly deploy", "fly secrets set A=b", "fly ssh console", "fly auth token", "fly tokens create deploy", "fly proxy 5432", "fly machine destroy x", "fly scale count 0", "fly")
	return map[string]reader{
		// Prometheus and its relatives.
		"promtool": r("--url --start --end --step --match --format --time --http.config.file --lint --extended --query.lookback-delta", "", "").
			withVerbs("help, version, query instant|range|series|labels|analyze, check config|rules|metrics|healthy|ready|web-config|service-discovery, tsdb analyze|list|dump|dump-openmetrics").
			samples([]string{"promtool query instant http://localhost:9090 'up == 0'", "promtool check config /etc/prometheus/prometheus.yml", "promtool tsdb list /var/lib/prometheus"},
				"promtool push metrics http://pushgateway:9091", "promtool tsdb create-blocks-from openmetrics m.txt out", "promtool debug all http://localhost:9090", "promtool"),
		"amtool": r("--alertmanager.url -o --output --config.file --timeout --http.config.file --date.format --matcher -m --within --template.text --template.data --template.glob", "", "").
			withVerbs("help, version, check-config, alert, alert query, silence, silence query, config, config show, config routes, config routes show|test, cluster show, template render").
			samples([]string{"amtool alert query --alertmanager.url=http://localhost:9093", "amtool silence query -e", "amtool config routes test severity=critical", "amtool alert"},
				"amtool silence add alertname=X -c x", "amtool silence expire 3f2c", "amtool silence import", "amtool alert add alertname=Fake", "amtool"),
		"logcli": r("--addr --since --from --to --limit -o --output --timezone -z --step --interval --batch --org-id --username --password --bearer-token --bearer-token-file --cert --key --ca-cert --tls-server-name --include-label --exclude-label --labels-length --output-timestamp-format --max-query-retries",
			"-t --tail -f --follow --part-path-prefix --parallel-duration --parallel-max-workers --merge-parts --keep-parts", "never ends or writes part files").
			withVerbs("help, version, query, instant-query, labels, series, stats, volume, volume_range, detected-fields").
			samples([]string{"logcli query '{app=\"api\"}' --since=1h", "logcli labels app", "logcli series '{ns=\"prod\"}'"},
				"logcli query '{app=\"api\"}' --tail", "logcli query x --part-path-prefix /tmp/p --parallel-duration 1h", "logcli"),
		"mimirtool": r("--address --id --user --key --auth-token --log.level --rule-files --rule-dirs --format -o --output --backend --tls-ca-path --tls-cert-path --tls-key-path", "", "").
			withVerbs("help, version, rules list|print|get|check|diff").
			samples([]string{"mimirtool rules list --address=http://mimir:8080 --id=tenant1", "mimirtool rules check rules.yaml"},
				"mimirtool rules load r.yaml", "mimirtool rules sync r.yaml", "mimirtool rules lint r.yaml", "mimirtool rules prepare r.yaml", "mimirtool alertmanager get", "mimirtool analyze prometheus"),
		"tempo-cli": r("--backend --bucket --s3-endpoint --s3-user --s3-pass --org-id --config-file", "", "").
			withVerbs("query api|blocks|trace-summary|search, list block|blocks|index|column|cache-summary|compaction-summary, view index|schema|pq, analyse block|blocks").
			samples([]string{"tempo-cli query api trace-id http://tempo:3200 4bf9", "tempo-cli list blocks t --backend=local --bucket=/var/tempo"},
				"tempo-cli gen bloom t b", "tempo-cli rewrite-blocks drop-trace x", "tempo-cli migrate tenant a b", "tempo-cli"),

		// GitOps and backups. argocd app get --refresh asks the repo server
		// to render again: it changes no application; --local renders with
		// local tools that can run plugins.
		"argocd": r("--server --grpc-web-root-path --auth-token --config -o --output --tail --since-seconds --container --group --kind --name --namespace -n --revision --source-positions --source-names --app-namespace -N --project -p --selector -l --repo --cluster --timeout",
			"--local --local-repo-root --local-include -f --follow", "renders with local tools or never ends").withCheck(argocdCheck).
			withVerbs("help, version, app list|get|history|diff|manifests|logs|resources, appset list|get, cluster list, proj list|get, repo list|get, repocreds list, cert list, gpg list, account list|get|get-user-info|can-i").
			samples([]string{"argocd app get api", "argocd app diff api", "argocd app list -o wide", "argocd app logs api --tail 100"},
				"argocd app sync api", "argocd app delete api", "argocd app rollback api 3", "argocd app set api --revision main",
				"argocd admin initial-password -n argocd", "argocd account generate-token", "argocd app terminate-op api",
				"argocd app actions run api restart --kind Deployment", "argocd app diff api --local ./k8s", "argocd app logs api -f", "argocd login cd.example.com",
				"argocd app get api -o yaml", "argocd app get api -o=json", "argocd app get api --output=yaml", "argocd app get api --show-params"),
		"flux": r("-n --namespace --context --kubeconfig --level --kind --name --since --tail -o --output --path --label-selector -l --status-selector --timeout --ignore-paths --kustomization-file",
			"-f --follow -w --watch", never).
			withVerbs("help, version, check, stats, logs, events, "+
				"get all|kustomizations|kustomization|ks|helmreleases|helmrelease|hr|alert-providers|alerts|receivers, get sources all|git|helm|chart|bucket|oci, get images all|repository|policy, "+
				"tree kustomization|ks|helmrelease|hr, diff kustomization|ks|artifact").
			samples([]string{"flux get kustomizations -A", "flux get sources git", "flux tree kustomization flux-system", "flux logs --level=error"},
				"flux reconcile kustomization apps", "flux suspend kustomization apps", "flux delete source git apps", "flux bootstrap github --owner x",
				"flux uninstall", "flux resume helmrelease api", "flux logs -f", "flux get ks --watch", "flux"),
		"velero": r("-n --namespace --kubeconfig --kubecontext -o --output --selector -l --cacert --timeout", "", "").
			withVerbs("help, version, backup get|describe|logs, restore get|describe|logs, schedule get|describe, backup-location get, snapshot-location get, plugin get, repo get, "+
				"get backups|backup|restores|restore|schedules|schedule|backup-locations|snapshot-locations|plugins, describe backups|backup|restores|restore|schedules|schedule").
			samples([]string{"velero backup get", "velero backup describe daily --details", "velero get backups", "velero schedule get"},
				"velero backup delete daily", "velero restore create --from-backup daily", "velero backup create now", "velero backup download daily",
				"velero install --provider aws", "velero debug", "velero"),

		// Cluster stores and brokers.
		"nodetool": r("-h --host -p --port -u --username --password-file", "", "").
			withVerbs("help, version, status, info, ring, tpstats, compactionstats, compactionhistory, describecluster, describering, netstats, tablestats, cfstats, "+
				"gossipinfo, proxyhistograms, tablehistograms, cfhistograms, listsnapshots, statusgossip, statusbinary, statushandoff, statusbackup, "+
				"getcompactionthroughput, getstreamthroughput, getendpoints, getsstables, gettimeout, getlogginglevels, getseeds, toppartitions, "+
				"viewbuildstatus, failuredetector, getconcurrentcompactors, gettraceprobability").
			samples([]string{"nodetool status", "nodetool -h 10.0.0.5 tpstats", "nodetool tablestats shop.orders"},
				"nodetool decommission", "nodetool removenode 3f2c", "nodetool drain", "nodetool repair shop", "nodetool cleanup", "nodetool flush",
				"nodetool stopdaemon", "nodetool assassinate 10.0.0.5", "nodetool setcompactionthroughput 0", "nodetool clearsnapshot --all", "nodetool snapshot shop", "nodetool"),
		"kafka-topics": kafka("kafka-topics", "--describe --list"), "kafka-topics.sh": kafka("kafka-topics.sh", "--describe --list"),
		"kafka-consumer-groups": kafka("kafka-consumer-groups", "--describe --list"), "kafka-consumer-groups.sh": kafka("kafka-consumer-groups.sh", "--describe --list"),
		"kafka-configs": kafka("kafka-configs", "--describe"), "kafka-configs.sh": kafka("kafka-configs.sh", "--describe"),
		"kafka-log-dirs": kafka("kafka-log-dirs", "--describe"), "kafka-log-dirs.sh": kafka("kafka-log-dirs.sh", "--describe"),
		"kafka-acls": kafka("kafka-acls", "--list"), "kafka-acls.sh": kafka("kafka-acls.sh", "--list"),
		"kafka-broker-api-versions": kafka("kafka-broker-api-versions", ""), "kafka-broker-api-versions.sh": kafka("kafka-broker-api-versions.sh", ""),
		"kafka-get-offsets": kafka("kafka-get-offsets", ""), "kafka-get-offsets.sh": kafka("kafka-get-offsets.sh", ""),
		"kafka-metadata-quorum": r(kafkaValued, kafkaDeny, "changes the quorum").withVerbs("describe").
			samples([]string{"kafka-metadata-quorum --bootstrap-server k:9092 describe --status"}, "kafka-metadata-quorum --bootstrap-server k:9092 add-controller", "kafka-metadata-quorum"),
		"kafka-metadata-quorum.sh": r(kafkaValued, kafkaDeny, "changes the quorum").withVerbs("describe").
			samples([]string{"kafka-metadata-quorum.sh --bootstrap-server k:9092 describe --replication"}, "kafka-metadata-quorum.sh --bootstrap-server k:9092 remove-controller", "kafka-metadata-quorum.sh"),

		// Smaller clouds.
		"hcloud": r("-o --output -l --selector --sort --context --config --poll-interval", "", "").
			withVerbs("help, version, context list|active, "+
				"server|volume|network|firewall|load-balancer|floating-ip|primary-ip|image|ssh-key|certificate|placement-group|location|datacenter|server-type|load-balancer-type|iso|storage-box list|describe").
			samples([]string{"hcloud server list", "hcloud server describe web-1", "hcloud load-balancer describe lb1"},
				"hcloud server delete web-1", "hcloud server poweroff web-1", "hcloud server reset-password web-1", "hcloud server enable-rescue web-1",
				"hcloud server ssh web-1", "hcloud server request-console web-1", "hcloud context create x", "hcloud"),
		"doctl": r("-o --output --format --context -t --access-token -u --api-url --config -c --region --type --tag-name --no-header", "", "").
			withVerbs("help, version, account get|ratelimit, balance get, billing-history list, invoice list, projects list|get, projects resources list, vpcs list|get, "+
				"compute droplet list|get|actions|neighbors|backups|snapshots|kernels, compute volume|image|snapshot|tag|firewall|load-balancer|domain|certificate|reserved-ip|floating-ip|ssh-key list|get, "+
				"compute region|size list, compute domain records list, compute action list|get, "+
				"kubernetes cluster list|get, kubernetes cluster node-pool list|get, kubernetes options versions|regions|sizes, "+
				"databases backups, databases firewalls list, databases options engines|regions|slugs|versions, apps list|get|logs|list-deployments|get-deployment|list-alerts|list-regions, "+
				"monitoring alert list|get, monitoring uptime list|get").
			samples([]string{"doctl compute droplet list", "doctl kubernetes cluster list", "doctl apps logs 6a3c --type run"},
				"doctl compute droplet delete 1", "doctl databases connection 6a3c", "doctl databases get 6a3c", "doctl databases user get 6a3c doadmin",
				"doctl databases pool list 6a3c", "doctl kubernetes cluster kubeconfig show prod", "doctl registry docker-config", "doctl compute ssh web-1", "doctl auth init", "doctl"),
		"fly": fly, "flyctl": fly,

		// File systems and firewalls.
		"btrfs": r("-t", "-z --reset", "resets the error counters").
			withVerbs("help, version, filesystem|fi|fil show|df|usage|du, subvolume|sub|subvol list|show|get-default, device|dev stats|usage, scrub status, balance status, replace status, qgroup show, property|prop get|list").
			samples([]string{"btrfs filesystem show", "btrfs subvolume list /", "btrfs device stats /mnt/data", "btrfs scrub status /", "btrfs fi df /"},
				"btrfs subvolume delete /mnt/snap", "btrfs device stats -z /mnt/data", "btrfs balance start /", "btrfs filesystem resize -10g /", "btrfs scrub start /",
				"btrfs device remove /dev/sdb /", "btrfs filesystem defragment -r /", "btrfs property set / ro true", "btrfs check --repair /dev/sdb", "btrfs"),
		"iptables-save":  r("-t --table", "-f --file -M --modprobe", "writes a file or runs a program").withMax(0),
		"ip6tables-save": r("-t --table", "-f --file -M --modprobe", "writes a file or runs a program").withMax(0),
	}
}

// kafkaValued are the options of the Kafka tools that take a value.
const kafkaValued = "--bootstrap-server --topic --group --command-config --entity-type --entity-name --entity-user --entity-client-id --broker --broker-list --topic-list --partitions --state --timeout --offsets --time --config --principal --resource-pattern-type --zookeeper --admin.config --consumer.config --producer.config --cluster --transactional-id --delegation-token --user-principal --bootstrap-controller"

// kafkaDeny are the options that make a Kafka tool change something.
// The destructive ones (--delete, --reset-offsets, --remove...) are not
// here: kafkaCheck calls them dangers, as it would for a tool with no row.
const kafkaDeny = "--alter --create --add --execute --add-config --force --producer --consumer --add-config-file --generate --verify"

// kafkaCheck: the Kafka tools look with --describe or --list (any other
// operation option is denied by the row); the tools with one job only
// take the connection options.
func kafkaCheck(needs string) check {
	want := strings.Fields(needs)
	return func(j *judge, c *cmd, opts []opt, operands []arg) string {
		for _, o := range opts {
			if destructiveVerb(o.long) {
				j.danger(c.shown + " " + o.String() + " " + effDestructiveVerb)
				return ""
			}
		}
		if len(operands) > 0 {
			return c.name + " " + operands[0].text + " is not a look"
		}
		if len(want) == 0 {
			return ""
		}
		for _, o := range opts {
			if in(o.String(), want...) {
				return ""
			}
		}
		return c.name + " without " + strings.Join(want, " or ") + " is not a look"
	}
}

// argocdCheck: argocd app get -o yaml|json and --show-params print the
// application's spec with its Helm values and parameters, where
// passwords live: a secret read, as helm get values is.
func argocdCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	if len(operands) < 2 || operands[0].text != "app" || operands[1].text != "get" {
		return ""
	}
	for _, o := range opts {
		if o.is('o', "output") && in(strings.TrimPrefix(o.value.text, "="), "yaml", "json") || o.is(0, "show-params") {
			j.danger("argocd app get " + o.String() + " prints the application's Helm values and parameters, where passwords live")
			return ""
		}
	}
	return ""
}
