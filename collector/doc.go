// Package collector turns the sidecar's state into Prometheus metrics. The
// state lives elsewhere and is read as snapshots: the broker's logs in
// collector/logstate, the Kafka admin API in collector/admin's poller. A
// scrape only reads memory: it never waits on a file or on Kafka.
//
// Every kafka_replication_* family is written by one text writer, WriteText,
// from tables. A family is declared once, as a *Family in the descriptor
// list (families.go): its name, one-sentence HELP, TYPE and label names,
// which the writer prints and the README table is generated from. State
// becomes a Table: rows that share a label block (a partition, a topic, a
// file, an event type) and one Column per family, each a function from a
// row to its value (ok false: no sample for that row). A source is a
// TableSource: a function that takes its snapshot and returns its tables,
// plus a release called once the scrape is written (to reuse the snapshot):
//
//	func (m *Thing) Tables() ([]*Table, func()) {
//		snap := m.snapshot() // a copy under the lock, or an immutable snapshot
//		parts := snap.Partitions
//		return []*Table{{
//			Rows:   len(parts),
//			Labels: func(row int, v []string) { v[0], v[1] = idLabel(parts[row].Partition), parts[row].Topic },
//			Columns: []Column{
//				{replicasFamily, func(row int) (float64, bool) { return float64(parts[row].Replicas), true }},
//				{minISRFamily, func(row int) (float64, bool) { return float64(parts[row].MinISR), parts[row].MinISR > 0 }},
//			},
//		}}, nil
//	}
//
//	WriteText(w, registryFamilies, keep, TableSource(thing.Tables))
//
// The writer orders each table's rows by label values (as Prometheus' own
// encoder orders series; a source whose rows are already in that order
// saves the sort and reads its memory in order), renders each row's label
// block once per scrape, escapes label values as expfmt does and writes a
// value that is not valid UTF-8 with U+FFFD in place of the invalid bytes.
//
// A table whose layout is costly (the admin partitions, sorted into series
// order) sets Prepare, which runs only when one of its families is written.
//
// The log half (log_metrics.go) and the admin half (admin_metrics.go) are
// both TableSources; the registry holds only the build info, Go and process
// collectors, which WriteText merges in by family name.
package collector
