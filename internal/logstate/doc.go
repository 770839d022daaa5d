// Package logstate keeps what a broker's own logs say about replication: one
// LogFile per followed file (internal/tail → logparse), merged by one Stream
// into log-time order, feeds the Store, which runs the invariant checker
// `verify` runs and keeps per-partition counters and gauges. It holds plain data only; package metrics renders a
// Snapshot of it as metrics. A scrape reads memory and never waits on a file.
package logstate
