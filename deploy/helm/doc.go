// Package helm holds the tests of the Helm chart in countersign/ (and of
// the umbrella chart countersign-redis/ that adds the Bitnami Redis): they
// lint and render it with helm, check the manifests a careful operator
// expects, and give the rendered configuration to the bot's own check.
// docs/deploy.md explains the chart.
package helm
