// Package e2e holds the end-to-end scenarios: real Apache Kafka clusters
// (see package harness) driven through replication failures, with the
// broker logs checked by the kafka_replication_exporter binary. The tests
// are skipped with -short. What each scenario proves is its test's doc
// comment; README.md says how the harness works and how to run one, and
// lists every scenario with the Kafka versions it runs on.
package e2e
