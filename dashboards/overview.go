package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
)

// sel is the matcher set of the overview: the cluster and the selected
// brokers; partition panels add the topic matcher.
var (
	sel      = join(clusterMatcher, instanceMatcher)
	topicSel = join(clusterMatcher, instanceMatcher, topicsMatcher)
	// zeroByTopic completes a query of a sparse family (no series for a
	// healthy partition) with a 0 per topic.
	zeroByTopic = zeroBy("topic")
)

// zeroBy completes a query of a sparse family, grouped by labels, with a 0
// for every group that has partitions: a healthy partition has no series.
func zeroBy(labels string) string {
	return fmt.Sprintf(` or 0 * sum by (%s) (kafka_replication_partition_replicas{%s})`, labels, topicSel)
}

// Overview is "Kafka / Replication / Overview": a status strip, then rows for
// ISR vs min ISR, the high watermark, consumers, log directories, the KRaft
// metadata quorum, churn, leadership, produce rejections and truncation, and
// the exporter itself.
func Overview() *dashboard.DashboardBuilder {
	d := withDefaults(dashboard.NewDashboardBuilder("Kafka / Replication / Overview").
		Uid("kafka-replication-overview").
		Description("Replication health of a Kafka cluster from kafka_replication_exporter: ISR against the effective min.insync.replicas, " +
			"high-watermark progress (KAFKA-15583), the KRaft metadata quorum, ISR churn, leadership, produce rejections and truncation.")).
		WithVariable(datasourceVariable()).
		WithVariable(clusterVariable()).
		WithVariable(instanceVariable()).
		WithVariable(topicVariable(true)).
		Link(dashboard.NewDashboardLinkBuilder("Topic drill-down").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"kafka-replication"}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true))

	for _, a := range eventAnnotations() {
		d = d.Annotation(a)
	}
	for _, p := range statusStrip() {
		d = d.WithPanel(p)
	}
	return d.
		WithRow(dashboard.NewRowBuilder("ISR vs min.insync.replicas")).
		WithPanel(timeSeries("Partitions under / at min ISR",
			"Partitions whose ISR is below (acks=all fails, HW stops on 3.7+) or exactly at the effective min ISR, per topic.",
			"short", 12, 8,
			query(fmt.Sprintf(`sum by (topic) (kafka_replication_partition_under_min_isr{%s})`, topicSel)+zeroByTopic, "under {{topic}}"),
			query(fmt.Sprintf(`sum by (topic) (kafka_replication_partition_at_min_isr{%s})`, topicSel)+zeroByTopic, "at {{topic}}"),
		).Decimals(0)).
		WithPanel(steps("ISR headroom",
			"Lowest ISR size minus effective min ISR over the topic's partitions: 0 is one failure from rejections, negative is under min ISR.",
			"short", 12, 8,
			// Per partition the exporter writes no headroom series (ISR minus min ISR
			// says it); its per-topic series (--no-collector.partition-labels, or the
			// healthy partitions under --collector.partition-series=unhealthy) has it.
			query(fmt.Sprintf(`min by (topic) ((kafka_replication_partition_in_sync_replicas{%[1]s} - kafka_replication_partition_min_insync_replicas{%[1]s})`+
				` or kafka_replication_partition_isr_headroom{%[1]s})`, topicSel), "{{topic}}"),
		)).
		WithPanel(partitionTable("Partitions by ISR headroom",
			"One row per partition, least headroom first. Min ISR is the effective value, min(min.insync.replicas, replication factor).",
			10, "Headroom",
			column{"Leader", fmt.Sprintf(`kafka_replication_partition_leader{%s}`, topicSel)},
			column{"Replicas", fmt.Sprintf(`kafka_replication_partition_replicas{%s}`, topicSel)},
			column{"ISR", fmt.Sprintf(`kafka_replication_partition_in_sync_replicas{%s}`, topicSel)},
			column{"Min ISR", fmt.Sprintf(`kafka_replication_partition_min_insync_replicas{%s}`, topicSel)},
			column{"Headroom", fmt.Sprintf(`kafka_replication_partition_in_sync_replicas{%[1]s} - kafka_replication_partition_min_insync_replicas{%[1]s}`, topicSel)},
		).
			OverrideByName("topic", []dashboard.DynamicConfigValue{{
				Id: "links",
				Value: []map[string]any{{
					"title": "Topic drill-down",
					"url":   "/d/kafka-replication-topic?${__url_time_range}&var-datasource=${datasource}&var-cluster=${cluster}&var-topic=${__data.fields.topic}",
				}},
			}}).
			OverrideByName("Headroom", []dashboard.DynamicConfigValue{
				{Id: "thresholds", Value: dashboard.ThresholdsConfig{
					Mode: dashboard.ThresholdsModeAbsolute,
					Steps: []dashboard.Threshold{
						{Value: nil, Color: "red"},
						{Value: cog.ToPtr(1.0), Color: "green"},
					},
				}},
				{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}},
			})).
		WithRow(dashboard.NewRowBuilder("High watermark")).
		WithPanel(timeSeries("Committed records/s",
			"How fast the high watermark advances, i.e. records becoming visible to consumers, per topic. Flat at 0 with producers active means a stall.",
			"cps", 8, 8,
			query(fmt.Sprintf(`sum by (topic) (deriv(kafka_replication_partition_high_watermark{%s}[$__rate_interval]))`, topicSel), "{{topic}}"),
		)).
		WithPanel(timeSeries("Uncommitted backlog (LEO − HW)",
			"Records appended to the leader but not yet committed, top 10 topics. A growing backlog under min ISR is KAFKA-15583.",
			"short", 8, 8,
			query(fmt.Sprintf(`topk(10, sum by (topic) (kafka_replication_partition_log_end_offset{%[1]s} - kafka_replication_partition_high_watermark{%[1]s}))`, topicSel), "{{topic}}"),
		)).
		WithPanel(timeSeries("Follower lag",
			"Offsets each follower is behind its leader, worst partition per topic and replica.",
			"short", 8, 8,
			query(fmt.Sprintf(`max by (topic, replica) (kafka_replication_partition_replica_lag{%s})`, topicSel)+zeroByTopic, "{{topic}} replica {{replica}}"),
		)).
		WithPanel(steps("High watermark stalled",
			"Partitions the exporter judges stalled: under min ISR, HW not advancing, log end offset ahead.",
			"short", 8, 8,
			query(fmt.Sprintf(`sum by (topic) (kafka_replication_partition_high_watermark_stalled{%s})`, topicSel)+zeroByTopic, "{{topic}}"),
		)).
		WithPanel(timeSeries("HW advances blocked under min ISR",
			"'Not increasing HWM because partition is under min ISR' lines per second (TRACE on kafka.cluster.Partition, Kafka 3.7+).",
			"ops", 8, 8,
			query(fmt.Sprintf(`sum by (topic) (rate(kafka_replication_partition_high_watermark_blocked_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("topic"), "{{topic}}"),
		)).
		WithPanel(bars("High watermark regressions",
			"Times a high watermark went backwards: seen by the admin API (admin) or in the broker log (log). Any is suspicious.",
			8, 8,
			query(fmt.Sprintf(`sum by (topic) (increase(kafka_replication_partition_high_watermark_regressions_total{%s}[$__rate_interval]))`, topicSel)+zeroByTopic, "admin {{topic}}"),
			query(fmt.Sprintf(`sum by (topic) (increase(kafka_replication_partition_high_watermark_violations_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("topic"), "log {{topic}}"),
		)).
		WithRow(consumersRow()).
		WithRow(logDirRow()).
		WithRow(quorumRow()).
		WithRow(churnRow()).
		WithRow(leadershipRow()).
		WithRow(rejectionsRow()).
		WithRow(exporterRow())
}

// withDefaults sets what both dashboards share.
func withDefaults(d *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return d.
		Tags([]string{"kafka-replication"}).
		Readonly().
		Refresh("30s").
		Time("now-3h", "now").
		Timezone(common.TimeZoneUtc).
		Tooltip(dashboard.DashboardCursorSyncCrosshair)
}

// statusStrip is one row of tiles, each red as soon as something is wrong.
func statusStrip() []*stat.PanelBuilder {
	return []*stat.PanelBuilder{
		statusStat("Admin API unreachable",
			"Sidecars whose last admin API refresh failed (kafka_replication_up == 0).",
			1, fmt.Sprintf(`count(kafka_replication_up{%s} == 0) or vector(0)`, sel)),
		statusStat("Offline partitions",
			"Partitions without a leader.",
			1, fmt.Sprintf(`count(kafka_replication_partition_leader{%s} == -1) or vector(0)`, topicSel)),
		statusStat("Under min ISR",
			"Partitions whose ISR is below the effective min ISR: acks=all produces fail.",
			1, fmt.Sprintf(`sum(kafka_replication_partition_under_min_isr{%s}) or vector(0)`, topicSel)),
		statusStat("At min ISR",
			"Partitions with exactly min ISR in-sync replicas: one failure from rejections.",
			1, fmt.Sprintf(`sum(kafka_replication_partition_at_min_isr{%s}) or vector(0)`, topicSel)),
		statusStat("Under-replicated",
			"Partitions with replicas out of the ISR.",
			1, fmt.Sprintf(`sum(kafka_replication_partition_under_replicated{%s}) or vector(0)`, topicSel)),
		statusStat("HW stalled",
			"Partitions whose high watermark is stuck under min ISR while records wait (KAFKA-15583).",
			1, fmt.Sprintf(`sum(kafka_replication_partition_high_watermark_stalled{%s}) or vector(0)`, topicSel)),
		statusStat("NotEnoughReplicas (1h)",
			"acks=all appends rejected with NOT_ENOUGH_REPLICAS in the last hour.",
			1, fmt.Sprintf(`round(sum(increase(kafka_replication_partition_produce_not_enough_replicas_total{%s}[1h]))) or vector(0)`, topicSel)),
		statusStat("Data-loss events (24h)",
			"Unclean leader elections plus truncations below the high watermark in the last 24 hours.",
			1, fmt.Sprintf(`round(
  (sum(max without (instance) (increase(kafka_replication_partition_unclean_leader_elections_total{%[1]s}[24h]))) or vector(0))
+ (sum(increase(kafka_replication_partition_truncations_below_high_watermark_total{%[1]s}[24h])) or vector(0))
)`, topicSel)),
	}
}

func churnRow() *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("ISR churn").
		WithPanel(timeSeries("ISR shrinks/s",
			"ISR shrinks logged by each leader. A broker that died shows shrinks only; churn is shrinks and expands together.",
			"ops", 12, 8,
			query(fmt.Sprintf(`sum without (topic, partition) (rate(kafka_replication_partition_isr_shrinks_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("instance"), "{{instance}}"),
		)).
		WithPanel(timeSeries("ISR expands/s",
			"ISR expands logged by each leader: followers catching up again.",
			"ops", 12, 8,
			query(fmt.Sprintf(`sum without (topic, partition) (rate(kafka_replication_partition_isr_expands_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("instance"), "{{instance}}"),
		)).
		WithPanel(timeSeries("Failed ISR updates/s",
			"'Failed to alter partition' / 'Failed to update ISR' lines: the leader could not get an ISR change accepted by the controller.",
			"ops", 12, 8,
			query(fmt.Sprintf(`sum by (topic) (rate(kafka_replication_partition_alter_partition_failures_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("topic"), "{{topic}}"),
		)).
		WithPanel(bars("ISR shrinks by topic",
			"ISR shrinks per topic over the selected time range.",
			12, 8,
			query(fmt.Sprintf(`sort_desc(sum by (topic) (increase(kafka_replication_partition_isr_shrinks_total{%s}[$__range]))`+zeroBy("topic")+`)`, topicSel), "{{topic}}").Instant(),
		))
}

func leadershipRow() *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("Leadership").
		WithPanel(timeSeries("Leader elections",
			"Partitions that got a new leader ('Leader ... starts at leader epoch' in state-change.log), per topic.",
			"short", 8, 8,
			query(fmt.Sprintf(`sum by (topic) (increase(kafka_replication_partition_leader_transitions_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("topic"), "{{topic}}"),
		).Decimals(0)).
		WithPanel(steps("Leaders per broker",
			"Partitions each broker leads. An even spread is the goal of preferred-leader election.",
			"short", 8, 8,
			query(fmt.Sprintf(`count by (leader) (kafka_replication_partition_leader{%s} >= 0)`, topicSel), "broker {{leader}}"),
		)).
		WithPanel(bars("Unclean leader elections",
			"Elections of an out-of-sync replica (controller.log); each controller logs them, so the maximum over sidecars is shown.",
			8, 8,
			query(fmt.Sprintf(`sum by (topic) (max without (instance) (increase(kafka_replication_partition_unclean_leader_elections_total{%s}[$__rate_interval])))`, topicSel)+zeroBy("topic"), "{{topic}}"),
		))
}

func rejectionsRow() *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("Produce rejections & truncation").
		WithPanel(timeSeries("NotEnoughReplicas rejections/s",
			"acks=all appends rejected because the ISR is below min.insync.replicas, per topic.",
			"ops", 8, 8,
			query(fmt.Sprintf(`sum by (topic) (rate(kafka_replication_partition_produce_not_enough_replicas_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("topic"), "{{topic}}"),
		)).
		WithPanel(timeSeries("Truncations/s",
			"Log truncations by each broker's replicas; ordinary after a leader change.",
			"ops", 8, 8,
			query(fmt.Sprintf(`sum without (topic, partition) (rate(kafka_replication_partition_truncations_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("instance"), "{{instance}}"),
		)).
		WithPanel(bars("Truncations below HW",
			"Truncations below the replica's high watermark: committed records discarded. Should never happen with clean elections.",
			8, 8,
			query(fmt.Sprintf(`sum by (instance, topic) (increase(kafka_replication_partition_truncations_below_high_watermark_total{%s}[$__rate_interval]))`, topicSel)+zeroBy("instance, topic"), "{{instance}} {{topic}}"),
		))
}

func exporterRow() *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("Exporter").
		WithPanel(steps("Admin API up",
			"1 when the sidecar's last admin API refresh succeeded.",
			"short", 8, 8,
			query(fmt.Sprintf(`kafka_replication_up{%s}`, sel), "{{instance}}"),
		).Min(0).Max(1)).
		WithPanel(timeSeries("Admin refresh duration",
			"Time the last admin API refresh took.",
			"s", 8, 8,
			query(fmt.Sprintf(`kafka_replication_refresh_duration_seconds{%s}`, sel), "{{instance}}"),
		)).
		WithPanel(timeSeries("Admin request errors/s",
			"Failed admin API requests by request type.",
			"ops", 8, 8,
			query(fmt.Sprintf(`sum by (instance, request) (rate(kafka_replication_admin_request_errors_total{%s}[$__rate_interval]))`, sel), "{{instance}} {{request}}"),
		)).
		WithPanel(timeSeries("Log lines read/s",
			"Lines the sidecar reads from each broker log file.",
			"ops", 8, 8,
			query(fmt.Sprintf(`sum by (instance, file) (rate(kafka_replication_log_lines_total{%s}[$__rate_interval]))`, sel), "{{instance}} {{file}}"),
		)).
		WithPanel(timeSeries("Malformed records/s",
			"Records dropped as binary junk, orphan continuation lines or over-long records.",
			"ops", 8, 8,
			query(fmt.Sprintf(`sum by (instance, file) (rate(kafka_replication_log_records_malformed_total{%s}[$__rate_interval]))`, sel), "{{instance}} {{file}}"),
		)).
		WithPanel(steps("Log files open",
			"1 while the sidecar follows the file, 0 while it waits for the file to appear (wrong path, or mid-rotation).",
			"short", 8, 8,
			query(fmt.Sprintf(`kafka_replication_log_file_open{%s}`, sel), "{{instance}} {{file}}"),
		).Min(0).Max(1)).
		WithPanel(timeSeries("Time since last log line",
			"Age of the newest line read from each file. state-change.log and controller.log are quiet on a calm cluster; all files old means a lost tail.",
			"s", 8, 8,
			query(fmt.Sprintf(`time() - kafka_replication_log_file_last_read_timestamp_seconds{%s}`, sel), "{{instance}} {{file}}"),
		)).
		WithPanel(timeSeries("Events parsed/s",
			"Log records that parsed to a replication event, by event type.",
			"ops", 16, 8,
			query(fmt.Sprintf(`sum by (type) (rate(kafka_replication_log_events_total{%s}[$__rate_interval]))`, sel), "{{type}}"),
		))
}

// eventAnnotations mark the rare, important events on every time series.
func eventAnnotations() []*dashboard.AnnotationQueryBuilder {
	annotation := func(name, color, expr, title string) *dashboard.AnnotationQueryBuilder {
		return dashboard.NewAnnotationQueryBuilder().
			Name(name).
			Datasource(datasource()).
			Enable(true).
			IconColor(color).
			Target(prometheus.NewDataqueryBuilder().Expr(expr).RefId("Anno")).
			Expr(expr).
			Step("60s").
			TitleFormat(title).
			TagKeys("topic")
	}
	return []*dashboard.AnnotationQueryBuilder{
		annotation("Unclean leader elections", "red",
			fmt.Sprintf(`sum by (topic) (max without (instance) (increase(kafka_replication_partition_unclean_leader_elections_total{%s}[$__rate_interval]))) > 0`, topicSel),
			"Unclean leader election"),
		annotation("High watermark regressions", "orange",
			fmt.Sprintf(`sum by (topic) (increase(kafka_replication_partition_high_watermark_regressions_total{%s}[$__rate_interval])) > 0`, topicSel),
			"High watermark regression"),
		annotation("Truncations below HW", "purple",
			fmt.Sprintf(`sum by (topic) (increase(kafka_replication_partition_truncations_below_high_watermark_total{%s}[$__rate_interval])) > 0`, topicSel),
			"Truncation below high watermark"),
	}
}
