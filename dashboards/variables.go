package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Matchers every query of a dashboard starts with.
var (
	clusterMatcher   = ClusterLabel + `="$cluster"`
	instanceMatcher  = `instance=~"$instance"`
	topicsMatcher    = `topic=~"$topic"`
	topicMatcher     = `topic="$topic"`
	partitionMatcher = `partition=~"$partition"`
)

func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder("datasource").
		Label("Data source").
		Type("prometheus")
}

// queryVariable refreshes on time-range change, so topics created or deleted
// in the selected range show up, and sorts alphabetically.
func queryVariable(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasource()).
		Query(dashboard.StringOrMap{String: &query}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
}

// clusterVariable reads build_info, which every sidecar exports whether it
// follows logs, polls the admin API or both.
func clusterVariable() *dashboard.QueryVariableBuilder {
	return queryVariable("cluster", "Cluster",
		`label_values(kafka_replication_exporter_build_info, `+ClusterLabel+`)`)
}

// instanceVariable selects sidecars, i.e. brokers.
func instanceVariable() *dashboard.QueryVariableBuilder {
	return queryVariable("instance", "Broker (sidecar)",
		`label_values(kafka_replication_exporter_build_info{`+clusterMatcher+`}, instance)`).
		Multi(true).
		IncludeAll(true).
		AllValue(".+")
}

// topicVariable lists the topics the admin API reports.
func topicVariable(multi bool) *dashboard.QueryVariableBuilder {
	v := queryVariable("topic", "Topic",
		`label_values(kafka_replication_partition_replicas{`+clusterMatcher+`}, topic)`)
	if multi {
		v = v.Multi(true).IncludeAll(true).AllValue(".*")
	}
	return v
}

func partitionVariable() *dashboard.QueryVariableBuilder {
	return queryVariable("partition", "Partition",
		`label_values(kafka_replication_partition_replicas{`+join(clusterMatcher, topicMatcher)+`}, partition)`).
		Sort(dashboard.VariableSortNumericalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".*")
}
