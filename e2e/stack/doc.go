// Package stack runs the monitoring side of an end-to-end setup beside a
// harness cluster: one kafka_replication_exporter sidecar per Kafka node, a
// real Prometheus scraping them and evaluating the alert rules, a real
// Alertmanager, and a webhook receiver that records what Alertmanager sends.
//
// It is used by the e2e tests (sidecar, alert loop) and by `make run`
// (e2e/cmd/devcluster). Every process it starts runs in its own process group
// with Pdeathsig=SIGKILL, like the harness's brokers, so nothing outlives the
// program that started it; Close stops it with SIGTERM, then SIGKILL.
//
// Prometheus and Alertmanager are the pinned builds that
// .ci/install-prometheus-tools.sh puts in ${KRE_CACHE}/bin (see Tool).
package stack
