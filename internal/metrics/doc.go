// Package metrics turns the sidecar's state into Prometheus metrics: it
// declares the exporter's kafka_replication_* families and maps the state
// onto tables that internal/exposition writes. The state lives elsewhere and
// is read as snapshots: the broker's logs in internal/logstate, the Kafka
// admin API in internal/poller's Poller. A scrape only reads memory: it never
// waits on a file or on Kafka. It imports internal/exposition (the writer),
// internal/logstate, internal/poller and internal/tail (for their
// snapshots) and internal/logparse (the event types); internal/exposition
// never imports it.
//
// A family is declared once, where its value is read: a family of a column
// table (partitionColumns, refreshColumns, fileColumns, groupPartitionColumns,
// shareGroupPartitionColumns, stableOffsetColumns, indexed by logstate.Counter for logCounterFamilies)
// is one entry holding its declaration (name, HELP, TYPE, labels, rollup)
// and its value function; a family that is the one column of a table built
// per scrape is a variable listed in its file's list (adminFamilies,
// logFamilies, ...). Families, for the README tables and the golden checks,
// is derived from the declarations list (declarations.go), which names each
// list once. Each source snapshots its state and returns one table per label
// set, a column per family (see package exposition for Table, RowTable and
// RollupTable).
//
// The log half (log_metrics.go) and the admin half (admin_metrics.go) are
// both TableSources; the registry holds only the build info, Go and process
// collectors, which exposition.WriteText merges in by family name.
//
// Each file uses only the files listed before it: values.go (label values and
// value helpers); families.go, stream_families.go, admin_families.go,
// quorum_families.go, consumer_group_families.go, position_families.go, probe_families.go
// tiering_families.go and share_group_families.go, which uses
// consumer_group_families.go's positionColumns (the declarations); declarations.go (Families); log_metrics.go,
// quorum_metrics.go, admin_metrics.go, admin_tiering.go (its tiering tables) and the other sources.
package metrics
