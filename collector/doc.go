// Package collector turns the sidecar's state into Prometheus metrics. The
// state lives elsewhere and is read as snapshots: the broker's logs in
// collector/logstate, the Kafka admin API in collector/admin's poller. A
// scrape only reads memory: it never waits on a file or on Kafka.
//
// Every kafka_replication_* family is written by one text writer, WriteText,
// from tables. A family is declared once, as a *Family in the descriptor
// list (families.go, admin_families.go, quorum_families.go): its name, one-sentence HELP, TYPE,
// label names and, for a per-partition family, how it rolls up per topic
// (Rollup), which the writer prints and the README table is generated from.
// State becomes a Table: rows that share a label block (a partition, a
// topic, a file, an event type) and one Column per family, each a function
// from a row to its value (ok false: no sample for that row). A source is a
// TableSource: a function that takes its snapshot and returns its tables,
// plus a release called once the scrape is written (to reuse the snapshot).
// rowTable builds a table from rows and a rowColumn per family, each read
// straight from the row; rollupTable folds the same rows per topic by the
// families' Rollup:
//
//	var thingColumns = []rowColumn[*Thing]{
//		{replicasFamily, func(p *Thing) (float64, bool) { return float64(p.Replicas), true }},
//		{minISRFamily, func(p *Thing) (float64, bool) { return float64(p.MinISR), p.MinISR > 0 }},
//	}
//
//	func (m *Things) Tables() ([]*Table, func()) {
//		rows := m.snapshot() // a copy under the lock, or an immutable snapshot
//		return []*Table{rowTable(rows, func(p *Thing, v []string) {
//			v[0], v[1] = idLabel(p.Partition), p.Topic
//		}, thingColumns)}, nil
//	}
//
//	WriteText(w, registryFamilies, keep, TableSource(things.Tables))
//
// The writer orders each table's rows by label values, as client_golang
// does (a source whose rows are already in that order saves the sort), reads
// every column of a row together, renders each row's label block once per
// scrape, escapes label values as expfmt does and writes a value that is not
// valid UTF-8 with U+FFFD in place of the invalid bytes.
//
// A table whose layout is costly (the admin partitions, sorted into series
// order) sets Prepare, which runs only when one of its families is written.
//
// The log half (log_metrics.go) and the admin half (admin_metrics.go) are
// both TableSources; the registry holds only the build info, Go and process
// collectors, which WriteText merges in by family name.
//
// Each file uses only the files listed before it: exposition.go (the text
// format), families.go, admin_families.go and quorum_families.go (the
// declarations), table.go (Table, rowTable, rollupTable), log_metrics.go,
// quorum_metrics.go and admin_metrics.go (the sources), write.go (WriteText).
package collector
