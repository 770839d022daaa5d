package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// logDirTable has a row per log directory the last refresh read
// (DescribeLogDirs): a few per broker, in any scope and with or without
// partition labels.
func logDirTable(s *poller.Snapshot) *exposition.Table {
	dirs := s.LogDirs
	return &exposition.Table{
		Rows:   len(dirs),
		Labels: func(row int, values []string) { values[0], values[1] = idLabel(dirs[row].Broker), dirs[row].Path },
		Columns: []exposition.Column{
			{Family: brokerLogDirOfflineFamily, Value: func(row int) (float64, bool) { return b2f(dirs[row].Offline), true }},
		},
	}
}

// rollupColumns are the columns folded per topic without partition labels:
// partitionColumns, and the offline replicas, which have a table of their
// own with partition labels (offlineTable) but must not vanish without.
var rollupColumns = append(partitionColumns[:len(partitionColumns):len(partitionColumns)],
	exposition.RowColumn[*poller.Partition]{Family: replicaOfflineFamily, Value: offlineReplicas})

// offlineReplicas counts p's replicas offline in a failed log directory;
// none is no value, so a topic without any has no series, as with labels.
func offlineReplicas(p *poller.Partition) (float64, bool) {
	n := 0
	for _, l := range p.Lags {
		if l.Offline {
			n++
		}
	}
	return float64(n), n > 0
}
