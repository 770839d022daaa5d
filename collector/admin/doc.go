// Package admin polls the Kafka admin API beside one broker and keeps the
// result as plain data. It owns the admin half of the sidecar: its flags
// (Config, with TLS and SASL), the connections to the brokers, the refresh
// that asks Metadata, DescribeConfigs and ListOffsets of each broker, plus
// each partition's ELR (package elr) and the reassignments in progress, the
// high-watermark history that stall and regression detection need, the join
// with this broker's log-derived view (LogView), and the opt-in switch of the
// broker's partition logger. It exports a Poller, whose Snapshot is the
// immutable result of the last refresh: topics and partitions with their
// replicas, ISR, effective min ISR, leader, offsets, lags and stall state,
// plus the poller's own counters. Rendering those as metrics is package
// collector's job, so this package never imports a Prometheus library.
package admin
