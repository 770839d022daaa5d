package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// tieringUnknownTable has a row per reason while tiering is read, none
// otherwise.
func tieringUnknownTable(s *poller.Snapshot) *exposition.Table {
	rows := 0
	if s.TieringRead {
		rows = int(poller.NumTieringUnknown) - 1 // every reason but known
	}
	return &exposition.Table{
		Rows:   rows,
		Labels: func(row int, values []string) { values[0] = poller.TieringUnknown(row + 1).String() },
		Columns: []exposition.Column{
			{Family: tieringUnknownFamily, Value: func(row int) (float64, bool) { return float64(s.TieringUnknown[row+1]), true }},
		},
	}
}

// tieringStallTable has a row per partition with series of its own whose
// tiering is stalled, labeled with its cause.
func (sc *adminScrape) tieringStallTable() *exposition.Table {
	return &exposition.Table{
		Prepare: func(t *exposition.Table) {
			sc.list()
			sc.tieringStalls = sc.tieringStalls[:0]
			for at, p := range sc.parts {
				if p.Tiering != nil && p.Tiering.Stalled {
					sc.tieringStalls = append(sc.tieringStalls, int32(at))
				}
			}
			t.Rows = len(sc.tieringStalls)
		},
		Labels: func(row int, values []string) {
			p := sc.parts[sc.tieringStalls[row]]
			values[0], values[1], values[2] = p.Tiering.Cause.String(), idLabel(p.Partition), p.Topic
		},
		Columns: []exposition.Column{
			{Family: tieringStalledFamily, Value: func(int) (float64, bool) { return 1, true }},
		},
	}
}
