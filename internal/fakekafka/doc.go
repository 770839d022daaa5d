// Package fakekafka is an in-process Kafka (kfake) with the hooks the
// poller's and the metrics' tests need. Only tests import it; it imports
// internal/logparse (for partition keys) and nothing else of the module.
//
// One file: fakekafka.go.
package fakekafka
