// Package e2e holds the end-to-end scenarios: real Apache Kafka clusters
// (see package harness) driven through replication failures, with the
// broker logs checked by the kafka_replication_exporter binary. The tests
// are skipped with -short; see README.md for what each scenario shows.
package e2e
