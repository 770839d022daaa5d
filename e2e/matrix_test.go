package e2e

import (
	"slices"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// The version matrix: which Kafka versions run which scenario (e2e/README.md,
// "Version matrix", says why). Every scenario runs on the current release;
// the last 3.x line runs the scenarios that read logs, because its logging
// backend (reload4j) and file rolling differ; the first ELR-by-default line
// runs only what ELR changes: the under-min-ISR window and the unclean election.
var (
	kafkaCurrent = harness.Versions[0] // 4.4.0
	kafkaELR     = "4.1.1"
	kafka3       = "3.9.1"
	// kafkaZooKeeper runs ZooKeeper mode (Options.ZooKeeper), only where it
	// logs differently from KRaft: the controller's unclean election.
	kafkaZooKeeper = kafka3

	everyVersion = []string{kafkaCurrent, kafkaELR, kafka3}
	logVersions  = []string{kafkaCurrent, kafka3}
)

// versionsOf lists the versions, in harness order, that any of the
// scenarios runs on.
func versionsOf(scenarios ...[]string) []string {
	var out []string
	for _, v := range harness.Versions {
		for _, s := range scenarios {
			if slices.Contains(s, v) && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}
