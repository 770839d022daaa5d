package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
)

// sparseAll marks every family of fams Sparse.
func sparseAll[A ~[logstate.NumCounters]*exposition.Family](fams A) A {
	for _, f := range fams {
		f.MarkSparse()
	}
	return fams
}

// logCounter declares a log-derived per-partition counter, summed when
// rolled up.
func logCounter(name, help, doc string) *exposition.Family {
	return exposition.NewFamily(name, help, exposition.Counter, partitionLabels...).WithDoc(doc).RollsUp(exposition.Sum, "")
}

// Label name sets, sorted.
var (
	partitionLabels = []string{"partition", "topic"}
	topicLabels     = []string{"topic"}
)

// The log-derived per-partition counters, indexed by logstate.Counter. Each
// is sparse: a partition whose broker logged none of its events has no series
// (the alerts count a series born in their window, which increase() misses).
var logCounterFamilies = sparseAll([logstate.NumCounters]*exposition.Family{
	logstate.HWUpdates: logCounter("partition_high_watermark_updates_total",
		"High-watermark advances this broker logged as the partition's leader.",
		"From `High watermark updated from … to …` (kafka.cluster.Partition, DEBUG)."),
	logstate.HWViolations: logCounter("partition_high_watermark_violations_total",
		"High-watermark decreases within one leadership (the hw_monotonic invariant).",
		"Consecutive `High watermark updated` lines of one leadership whose offset went back (DEBUG)."),
	logstate.HWBlocked: logCounter("partition_high_watermark_blocked_total",
		"High-watermark increments refused while the partition was under min ISR (KAFKA-15583).",
		"From `Not increasing HWM because partition is under min ISR` (kafka.cluster.Partition, TRACE, Kafka ≥ 3.7)."),
	logstate.ISRShrinks: logCounter("partition_isr_shrinks_total",
		"Committed ISR shrinks seen in this broker's log or, in leader scope, in Metadata.",
		"From an `ISR updated to …` with fewer members than the ISR known before (kafka.cluster.Partition, INFO), the leader's "+
			"`Shrinking ISR from … to …` telling that ISR, or `Ignoring failed ISR update to PendingShrinkIsr … since we have already updated state to …` (DEBUG). "+
			"A `Shrinking ISR` alone only proposes the shrink: one the controller rejects (`Failed to alter partition to …`, counted in "+
			"`kafka_replication_partition_alter_partition_failures_total`) or never answers is not counted; meanwhile the stall cause `isr_shrink_pending` shows it."),
	logstate.ISRExpands: logCounter("partition_isr_expands_total",
		"Committed ISR expansions seen in this broker's log or, in leader scope, in Metadata.",
		"From an `ISR updated to …` with more members than the previous one (INFO), or `Ignoring failed ISR update to PendingExpandIsr … since we have "+
			"already updated state to …` for an expansion that reached the leader through metadata first (DEBUG); Kafka ≤ 2.7: `Expanding ISR`."),
	logstate.EpochRegressions: logCounter("partition_epoch_regressions_total",
		"ISR updates whose partition epoch did not increase (the partition_epoch_monotonic invariant).",
		"From `ISR updated to … and version updated to N` lines whose version did not increase (INFO)."),
	logstate.NotEnoughReplicas: logCounter("partition_produce_not_enough_replicas_total",
		"Produce requests this broker rejected with NotEnoughReplicas.",
		"From `Error processing append operation` with NotEnoughReplicasException (kafka.server.ReplicaManager, ERROR)."),
	logstate.Truncations: logCounter("partition_truncations_total",
		"Log truncations that removed data.",
		"From UnifiedLog `Truncating to offset N` (INFO); the fetcher's `Truncating partition …` alone does not count."),
	logstate.TruncationsBelowHW: logCounter("partition_truncations_below_high_watermark_total",
		"Truncations below this replica's last known high watermark, that is committed data lost.",
		"Fetcher and UnifiedLog truncation lines checked against `Log loaded … initial high watermark`, the leader/follower lines and HW updates."),
	logstate.UncleanElections: logCounter("partition_unclean_leader_elections_total",
		"Unclean leader elections, counted once however many controllers logged them.",
		"From controller.log `UNCLEAN partition change` / `Setting new leader … using an unclean election` (KRaft); in ZooKeeper mode from the controller's "+
			"state-change.log `Changed partition … from OfflinePartition to OnlinePartition` with `leaderRecoveryState=RECOVERING` or a leader outside the last "+
			"ISR."),
	logstate.LeaderTransitions: logCounter("partition_leader_transitions_total",
		"Times this broker became the partition's leader.",
		"From state-change.log `Leader … starts at leader epoch` (INFO)."),
	logstate.FollowerTransitions: logCounter("partition_follower_transitions_total",
		"Times this broker became a follower of the partition.",
		"From state-change.log `Follower … starts at leader epoch` (INFO)."),
	logstate.AlterPartitionFailures: logCounter("partition_alter_partition_failures_total",
		"ISR changes this broker failed to make.",
		"From `Failed to alter partition` / `Failed to update ISR` (kafka.cluster.Partition)."),
	logstate.HWLowered: logCounter("partition_high_watermark_lowered_total",
		"Times this replica's high watermark was lowered, as Kafka's own WARN says: committed records it gave up, typically as the old leader rejoining after "+
			"an unclean election.",
		"From UnifiedLog `Non-monotonic update of high watermark from X to Y` (WARN)."),
	logstate.HWLoweredOffsets: logCounter("partition_high_watermark_lowered_offsets_total",
		"Offsets by which this replica's high watermark was lowered, summed over those WARNs (X − Y each).",
		"A lower bound of what the partition lost: X is this replica's own HW, which may lag the leader's."),
})

// The log-derived high watermark of each partition.
var logHWFamily = exposition.NewFamily("partition_log_high_watermark",
	"Last high watermark this broker's log showed for the partition.",
	exposition.Gauge, partitionLabels...).
	WithDoc("From `High watermark updated`, `Log loaded … initial high watermark` and the leader/follower lines.").
	RollsUp(exposition.Sum, "")

// The two families both halves export: the admin half joins Metadata with
// the log's view; without the admin API (log-only mode) the log half exports
// its own view, for the partitions this broker leads.
var (
	isrFamily = exposition.NewFamily("partition_in_sync_replicas",
		"In-sync replicas of the partition (Metadata joined with this broker's logs: the fresher wins; log-only mode: this broker's log, for partitions it leads).",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Sum of in-sync replicas over the topic's exported partitions (Metadata joined with this broker's logs).")
	leaderEpochFamily = exposition.NewFamily("partition_leader_epoch",
		"Leader epoch of the partition (Metadata joined with this broker's logs: the fresher wins; log-only mode: state-change.log, for partitions this broker "+
			"leads).",
		exposition.Gauge, partitionLabels...)
)

// The event totals, by logparse event type.
var (
	logEventsFamily = exposition.NewFamily("log_events_total", "Log records that parsed to a replication event, by logparse event type.",
		exposition.Counter, "type")
	logLastEventFamily = exposition.NewFamily("log_last_event_timestamp_seconds",
		"Time of the last event of the type: its own timestamp, or when it was read if it has none.",
		exposition.Gauge, "type")
)

// logDirOfflineFamily is the broker's own account of a failed log
// directory: the sidecar beside a broker reads it without the admin API.
var logDirOfflineFamily = exposition.NewFamily("log_dir_offline",
	"1 once this broker's log said it stopped serving the replicas in the log directory (a failed disk or mount), 0 after the broker started again.",
	exposition.Gauge, "broker", "dir").
	WithDoc("From ReplicaManager's `Stopping serving replicas in dir …`; reset by the broker's start (`[BrokerServer id=N] Transition from SHUTDOWN " +
		"to STARTING`, ZooKeeper mode `starting`). `broker` is the id the line names. Only directories the log named have a series. " +
		"Alert: `KafkaBrokerLogDirOffline`.")

// The KRaft metadata log as each node's own lines tell it (logstate.QuorumNode), by the node the lines name: every
// sidecar has them, the log-only sidecar of a dedicated controller too, once it follows the controller's server.log.
var (
	metadataLogTransitionsFamily = exposition.NewFamily("metadata_log_transitions_total",
		"Raft state transitions of the node's metadata log client, by the state entered.",
		exposition.Counter, "node", "state").
		WithDoc("From server.log `[RaftManager id=N] Completed transition to <State>(…)` (org.apache.kafka.raft.QuorumState, INFO). States: " +
			"`leader`, `follower`, `candidate`, `prospective` (4.x pre-vote), `unattached`, `resigned`, `voted` (≤ 3.8). Every state has a series " +
			"from the node's first line.")
	metadataLogElectionsFamily = exposition.NewFamily("metadata_log_elections_total",
		"Metadata quorum leaders the node saw elected: new epochs with a leader, once per epoch.",
		exposition.Counter, "node").
		WithDoc("From the transitions to `Leader`/`FollowerState` (server.log) and controller.log's `[QuorumController id=N] Becoming the active " +
			"controller at epoch E` / `In the new epoch E, the leader is L` (INFO); an epoch counts once whichever file told it, and a restarted " +
			"node rejoining an epoch it saw does not count it again. Alert: `KafkaMetadataQuorumLeaderFlapping`.")
	metadataLogFetchTimeoutsFamily = exposition.NewFamily("metadata_log_fetch_timeouts_total",
		"Elections the node started because its leader stopped answering its fetches.",
		exposition.Counter, "node").
		WithDoc("From `Transitioning to Prospective state due to fetch timeout` (4.x) / `Become candidate due to fetch timeout` (3.x) " +
			"(org.apache.kafka.raft.KafkaRaftClient, INFO).")
	metadataLogResignationsFamily = exposition.NewFamily("metadata_log_leader_resignations_total",
		"Leaderships the node gave up for want of fetches from a majority of the voters.",
		exposition.Counter, "node").
		WithDoc("From `Did not receive fetch request from the majority of the voters within Nms` (org.apache.kafka.raft.LeaderState, INFO): " +
			"the leader could not reach a majority for 1.5 × controller.quorum.fetch.timeout.ms.")
	metadataLogHWRegressionsFamily = exposition.NewFamily("metadata_log_high_watermark_regressions_total",
		"Times the node, as quorum leader, computed a metadata high watermark below its current one: a voter lost committed metadata.",
		exposition.Counter, "node").
		WithDoc("From `The latest computed high watermark X is smaller than the current value Y` (org.apache.kafka.raft.LeaderState, INFO), " +
			"once per current value however often the leader repeats it (verify's `metadata_hw_monotonic`). " +
			"Alert: `KafkaMetadataHighWatermarkRegressed`.")
	metadataLogTruncationsFamily = exposition.NewFamily("metadata_log_truncations_total",
		"Truncations of the node's metadata log to where its leader's log diverged.",
		exposition.Counter, "node").
		WithDoc("From `Truncated to offset N from Fetch response from leader L` (org.apache.kafka.raft.KafkaRaftClient, INFO); " +
			"a follower replacing its log by the leader's snapshot (`Fully truncated the log …`) is not one.")
)

// The store's bound on partitions (logstate.DefaultMaxPartitions, --log.max-partitions).
var (
	logPartitionsFamily        = exposition.NewFamily("log_partitions", "Partitions the exporter keeps log-derived state for.", exposition.Gauge)
	logPartitionsRefusedFamily = exposition.NewFamily("log_partitions_refused_total",
		"Log events whose partition got no state because --log.max-partitions partitions were already kept.",
		exposition.Counter)
)

// fileColumns are the followers' own metrics, by file, and the file events
// that do not stop the stream: a row per log file (fileTable).
var fileColumns = []exposition.RowColumn[*logstate.FileStats]{
	column(exposition.NewFamily("log_records_total", "Log records read (a header line plus its continuation lines).", exposition.Counter, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Records), true }),
	column(exposition.NewFamily("log_records_malformed_total",
		"Physical lines dropped as malformed: binary junk, continuation lines without a header, parts of over-long lines.",
		exposition.Counter, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Malformed), true }),
	column(exposition.NewFamily("log_lines_total",
		"Physical lines read.",
		exposition.Counter, "file").
		WithDoc("Counted as their record is applied, so that a line read again after a restart (the last record, held for its continuation lines) counts once."),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Lines), true }),
	column(exposition.NewFamily("log_records_recognized_total",
		"Log records read that Kafka logged in a layout the exporter knows.",
		exposition.Counter, "file").
		WithDoc("A record whose header (date, level) is in a supported layout and whose message starts with one of Kafka's bracketed ident prefixes "+
			"(`[Partition …] `, `[GroupCoordinator id=1] `, …) or names a Kafka logger, whether or not it is a replication event. "+
			"Lines read while this stays flat mean a layout the exporter does not know: its events are lost "+
			"(`KafkaReplicationExporterLogLayoutUnknown`; a WARN after 200 lines in a row without one, once per change)."),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Recognized), true }),
	column(exposition.NewFamily("log_bytes_total", "Bytes read.", exposition.Counter, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Bytes), true }),
	column(exposition.NewFamily("log_file_rotations_total", "Rename+create rotations followed (log4j's hourly roll).", exposition.Counter, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Rotations), true }),
	column(exposition.NewFamily("log_file_truncations_total", "copytruncate-style truncations detected (reading restarted at offset 0).",
		exposition.Counter, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Truncations), true }),
	column(exposition.NewFamily("log_file_partial_truncations_total",
		"Times the live file was cut shorter but kept its beginning; reading went on at its new end.",
		exposition.Counter, "file").
		WithDoc("Lines between the new end and where reading stood are lost; nothing is read twice. Each is also logged at WARN."),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.PartialTruncations), true }),
	column(exposition.NewFamily("log_future_timestamps_total",
		"Events stamped more than an hour past both their file's previous event and the wall clock, ordered as that previous event.",
		exposition.Counter, "file").
		WithDoc("Within one file, file order is the truth: such a stamp is not allowed to hold back the file's later lines."),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.FutureTimestamps), true }),
	column(exposition.NewFamily("log_events_skipped_total",
		"Events read again after a restart that could not resume at its saved position, not applied again: they were applied before the stop.",
		exposition.Counter, "file").
		WithDoc("Such a restart (the file's beginning changed, or the saved file matches no file) reads the file from its beginning; "+
			"every record up to the first event stamped after the last one applied before the stop is skipped. Logged at WARN with the count."),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.SkippedEvents), true }),
	column(exposition.NewFamily("log_file_behind_bytes",
		"Bytes of the file, and of files rotated before it, not read yet; 0 once read to its end.",
		exposition.Gauge, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.BehindBytes), true }),
	column(exposition.NewFamily("log_file_position_bytes", "Read offset in the file currently followed.", exposition.Gauge, "file"),
		func(st *logstate.FileStats) (float64, bool) { return float64(st.Offset), true }),
	column(exposition.NewFamily("log_file_last_read_timestamp_seconds",
		"Wall time the last line was read from the file (stale-log detection).",
		exposition.Gauge, "file"),
		func(st *logstate.FileStats) (float64, bool) { return unixSeconds(st.LastRead), !st.LastRead.IsZero() }),
	column(exposition.NewFamily("log_file_open", "1 when the file (or stdin) is open and followed, 0 while it is missing or in error.",
		exposition.Gauge, "file"),
		func(st *logstate.FileStats) (float64, bool) { return b2f(st.Ready), true }),
}

// A file's error state, by file and reason (fileErrorTable).
var (
	fileErrorFamily = exposition.NewFamily("log_file_error",
		"1 for the reason the file cannot be followed right now, 0 for the other reasons.",
		exposition.Gauge, "file", "reason").
		WithDoc("Reasons: `not_found`, `permission_denied`, `not_regular_file` (a directory, FIFO or device), `read_error`. " +
			"Each change of state is also logged once " +
			"at WARN.")
	fileErrorsFamily = exposition.NewFamily("log_file_errors_total", "Times the file entered an error state, by reason.", exposition.Counter, "file", "reason")
)

// logFamilies are the log half's families outside its column tables
// (logCounterFamilies, fileColumns), for Families; the ISR and leader epoch
// are listed by the admin half's partitionColumns.
var logFamilies = []*exposition.Family{
	logHWFamily, logEventsFamily, logLastEventFamily, logDirOfflineFamily,
	metadataLogTransitionsFamily, metadataLogElectionsFamily, metadataLogFetchTimeoutsFamily, metadataLogResignationsFamily,
	metadataLogHWRegressionsFamily, metadataLogTruncationsFamily,
	logPartitionsFamily, logPartitionsRefusedFamily, fileErrorFamily, fileErrorsFamily,
}
