// Package exposition is the text-exposition engine: it writes Prometheus
// families in the text format, straight into a byte buffer, from tables.
// It knows nothing of Kafka or of the sidecar's state; internal/metrics
// declares the families and turns the state into tables. It imports nothing
// of the module.
//
// A family is declared once, as a *Family (NewFamily): its name, one-sentence
// HELP, TYPE, label names and, for a per-partition family, how it rolls up
// per topic (Rollup), which the writer prints and the README table is
// generated from. State becomes a Table: rows that share a label block (a
// partition, a topic, a file, an event type) and one Column per family, each
// a function from a row to its value (ok false: no sample for that row). A
// source is a TableSource: a function that takes its snapshot and returns its
// tables, plus a release called once the scrape is written (to reuse the
// snapshot). RowTable builds a table from rows and a RowColumn per family,
// each read straight from the row; RollupTable folds the same rows per topic
// by the families' Rollup:
//
//	var thingColumns = []exposition.RowColumn[*Thing]{
//		{Family: replicasFamily, Value: func(p *Thing) (float64, bool) { return float64(p.Replicas), true }},
//		{Family: minISRFamily, Value: func(p *Thing) (float64, bool) { return float64(p.MinISR), p.MinISR > 0 }},
//	}
//
//	func (m *Things) Tables() ([]*exposition.Table, func()) {
//		rows := m.snapshot() // a copy under the lock, or an immutable snapshot
//		return []*exposition.Table{exposition.RowTable(rows, func(p *Thing, v []string) {
//			v[0], v[1] = idLabel(p.Partition), p.Topic
//		}, thingColumns)}, nil
//	}
//
//	exposition.WriteText(w, registryFamilies, keep, exposition.TableSource(things.Tables))
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
// The registry holds only the build info, Go and process collectors, which
// WriteText merges in by family name. MetricsHandler serves /metrics from a
// registry and table sources: one rendering shared by the concurrent scrapes
// of the same families, gzip, name[] selection and a bound on requests in
// flight.
//
// Each file uses only the files listed before it: exposition.go (the text
// format), family.go (Family, Rollup), table.go (Table, RowTable,
// RollupTable), write.go (WriteText), metrics_handler.go (MetricsHandler).
package exposition
