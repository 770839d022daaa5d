package metrics

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"

// declarations are every declaration list of the package, once each: a
// column table is its own list, so a family added to one is listed with
// no further edit.
var declarations = [][]*exposition.Family{
	logCounterFamilies[:], familiesOf(fileColumns), logFamilies, streamFamilies,
	familiesOf(refreshColumns), familiesOf(partitionColumns), adminFamilies, quorumFamilies(),
	familiesOf(groupPartitionColumns), familiesOf(stableOffsetColumns), consumerGroupFamilies,
	positionFamilies, probeFamilies, tieringFamilies,
	familiesOf(shareGroupPartitionColumns), shareGroupFamilies,
}

// familiesOf are the families of a column table.
func familiesOf[R any](cols []exposition.RowColumn[R]) []*exposition.Family {
	fams := make([]*exposition.Family, len(cols))
	for i, c := range cols {
		fams[i] = c.Family
	}
	return fams
}

// Families lists every family the exporter writes (the partition-labeled
// form of those with a per-topic rollup), for the README and the golden
// checks.
func Families() []*exposition.Family {
	var fams []*exposition.Family
	for _, list := range declarations {
		fams = append(fams, list...)
	}
	return fams
}
