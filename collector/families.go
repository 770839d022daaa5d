package collector

import "github.com/kafka-replication-exporter/kafka_replication_exporter/collector/logstate"

// metricPrefix starts every family name this exporter defines.
const metricPrefix = "kafka_replication_"

// Type is a family's TYPE in the exposition.
type Type uint8

// The types the exporter uses: its values are sampled state, not distributions.
const (
	Gauge Type = iota
	Counter
)

func (t Type) String() string {
	if t == Counter {
		return "counter"
	}
	return "gauge"
}

// Family describes one metric family: the single source of its name, HELP,
// TYPE and label names for the writer (Table) and for the README (docgen).
type Family struct {
	Name   string   // full name, with metricPrefix
	Help   string   // one sentence; the README table can say more
	Type   Type     //
	Labels []string // label names, sorted: the order the writer renders them in
	Doc    string   // more for the README: which log lines (and level) it comes from
	// Rollup is the per-topic form of a per-partition family, exported
	// instead of it under --no-collector.partition-labels; nil = none.
	Rollup *Rollup
	// Sparse: in the per-partition form a 0 is not written, so a healthy
	// partition has no series; the per-topic rollup still counts it.
	Sparse bool
	// Derived: no per-partition form, because PromQL derives it from series
	// with the same labels; only the per-topic rollup is written.
	Derived bool

	text *textFamily // the rendered HELP and TYPE lines
}

// Rollup says how a per-partition family folds into one series per topic
// (rollupTable): same name and type, label topic only, its own HELP.
type Rollup struct {
	Family *Family
	Fold   Fold
	// Always exports a topic's series, as 0, even when none of its
	// partitions has a value; otherwise the topic then has no series.
	Always bool
}

// Fold is how the values of a topic's partitions make its rollup value.
type Fold uint8

const (
	Sum Fold = iota // the sum (a count, for 0/1 values)
	Min             // the smallest
)

func newFamily(name, help string, typ Type, labels ...string) *Family {
	f := &Family{Name: metricPrefix + name, Help: help, Type: typ, Labels: labels}
	f.text = newTextFamily(f.Name, f.Help, typ == Counter)
	return f
}

// withDoc sets the README's extra text.
func (f *Family) withDoc(doc string) *Family {
	f.Doc = doc
	return f
}

// rollsUp declares the family's per-topic form; help "" keeps the family's
// own HELP, for a counter whose sentence reads the same summed per topic.
func (f *Family) rollsUp(fold Fold, help string) *Family {
	if help == "" {
		help = f.Help
	}
	f.Rollup = &Rollup{Family: newFamily(f.Name[len(metricPrefix):], help, f.Type, topicLabels...), Fold: fold}
	return f
}

// rollsUpAlways is rollsUp with Rollup.Always.
func (f *Family) rollsUpAlways(fold Fold, help string) *Family {
	f.rollsUp(fold, help).Rollup.Always = true
	return f
}

// sparse marks the family Sparse.
func (f *Family) sparse() *Family {
	f.Sparse = true
	return f
}

// sparseAll marks every family of fams Sparse.
func sparseAll[A ~[logstate.NumCounters]*Family](fams A) A {
	for _, f := range fams {
		f.sparse()
	}
	return fams
}

// derived marks the family Derived.
func (f *Family) derived() *Family {
	f.Derived = true
	return f
}

// Label name sets, sorted.
var (
	partitionLabels = []string{"partition", "topic"}
	topicLabels     = []string{"topic"}
)

// The log-derived per-partition counters, indexed by logstate.Counter. Each
// is sparse: a partition whose broker logged none of its events has no series
// (the alerts count a series born in their window, which increase() misses).
var logCounterFamilies = sparseAll([logstate.NumCounters]*Family{
	logstate.HWUpdates: newFamily("partition_high_watermark_updates_total",
		"High-watermark advances this broker logged as the partition's leader.",
		Counter, partitionLabels...).
		withDoc("From `High watermark updated from … to …` (kafka.cluster.Partition, DEBUG).").
		rollsUp(Sum, ""),
	logstate.HWViolations: newFamily("partition_high_watermark_violations_total",
		"High-watermark decreases within one leadership (the hw_monotonic invariant).",
		Counter, partitionLabels...).
		withDoc("Consecutive `High watermark updated` lines of one leadership whose offset went back (DEBUG).").
		rollsUp(Sum, ""),
	logstate.HWBlocked: newFamily("partition_high_watermark_blocked_total",
		"High-watermark increments refused while the partition was under min ISR (KAFKA-15583).",
		Counter, partitionLabels...).
		withDoc("From `Not increasing HWM because partition is under min ISR` (kafka.cluster.Partition, TRACE, Kafka ≥ 3.7).").
		rollsUp(Sum, ""),
	logstate.ISRShrinks: newFamily("partition_isr_shrinks_total",
		"Committed ISR shrinks seen in this broker's log or, in leader scope, in Metadata.",
		Counter, partitionLabels...).
		withDoc("From an `ISR updated to …` with fewer members than the ISR known before (kafka.cluster.Partition, INFO), the leader's "+
			"`Shrinking ISR from … to …` telling that ISR, or `Ignoring failed ISR update to PendingShrinkIsr … since we have already updated state to …` (DEBUG). "+
			"A `Shrinking ISR` alone only proposes the shrink: one the controller rejects (`Failed to alter partition to …`, counted in "+
			"`kafka_replication_partition_alter_partition_failures_total`) or never answers is not counted; meanwhile the stall cause `isr_shrink_pending` shows it.").
		rollsUp(Sum, ""),
	logstate.ISRExpands: newFamily("partition_isr_expands_total",
		"Committed ISR expansions seen in this broker's log or, in leader scope, in Metadata.",
		Counter, partitionLabels...).
		withDoc("From an `ISR updated to …` with more members than the previous one (INFO), or `Ignoring failed ISR update to PendingExpandIsr … since we have "+
			"already updated state to …` for an expansion that reached the leader through metadata first (DEBUG); Kafka ≤ 2.7: `Expanding ISR`.").
		rollsUp(Sum, ""),
	logstate.EpochRegressions: newFamily("partition_epoch_regressions_total",
		"ISR updates whose partition epoch did not increase (the partition_epoch_monotonic invariant).",
		Counter, partitionLabels...).
		withDoc("From `ISR updated to … and version updated to N` lines whose version did not increase (INFO).").
		rollsUp(Sum, ""),
	logstate.NotEnoughReplicas: newFamily("partition_produce_not_enough_replicas_total",
		"Produce requests this broker rejected with NotEnoughReplicas.",
		Counter, partitionLabels...).
		withDoc("From `Error processing append operation` with NotEnoughReplicasException (kafka.server.ReplicaManager, ERROR).").
		rollsUp(Sum, ""),
	logstate.Truncations: newFamily("partition_truncations_total",
		"Log truncations that removed data.",
		Counter, partitionLabels...).
		withDoc("From UnifiedLog `Truncating to offset N` (INFO); the fetcher's `Truncating partition …` alone does not count.").
		rollsUp(Sum, ""),
	logstate.TruncationsBelowHW: newFamily("partition_truncations_below_high_watermark_total",
		"Truncations below this replica's last known high watermark, that is committed data lost.",
		Counter, partitionLabels...).
		withDoc("Fetcher and UnifiedLog truncation lines checked against `Log loaded … initial high watermark`, the leader/follower lines and HW updates.").
		rollsUp(Sum, ""),
	logstate.UncleanElections: newFamily("partition_unclean_leader_elections_total",
		"Unclean leader elections, counted once however many controllers logged them.",
		Counter, partitionLabels...).
		withDoc("From controller.log `UNCLEAN partition change` / `Setting new leader … using an unclean election` (KRaft); in ZooKeeper mode from the controller's "+
			"state-change.log `Changed partition … from OfflinePartition to OnlinePartition` with `leaderRecoveryState=RECOVERING` or a leader outside the last "+
			"ISR.").
		rollsUp(Sum, ""),
	logstate.LeaderTransitions: newFamily("partition_leader_transitions_total",
		"Times this broker became the partition's leader.",
		Counter, partitionLabels...).
		withDoc("From state-change.log `Leader … starts at leader epoch` (INFO).").
		rollsUp(Sum, ""),
	logstate.FollowerTransitions: newFamily("partition_follower_transitions_total",
		"Times this broker became a follower of the partition.",
		Counter, partitionLabels...).
		withDoc("From state-change.log `Follower … starts at leader epoch` (INFO).").
		rollsUp(Sum, ""),
	logstate.AlterPartitionFailures: newFamily("partition_alter_partition_failures_total",
		"ISR changes this broker failed to make.",
		Counter, partitionLabels...).
		withDoc("From `Failed to alter partition` / `Failed to update ISR` (kafka.cluster.Partition).").
		rollsUp(Sum, ""),
	logstate.HWLowered: newFamily("partition_high_watermark_lowered_total",
		"Times this replica's high watermark was lowered, as Kafka's own WARN says: committed records it gave up, typically as the old leader rejoining after "+
			"an unclean election.",
		Counter, partitionLabels...).
		withDoc("From UnifiedLog `Non-monotonic update of high watermark from X to Y` (WARN).").
		rollsUp(Sum, ""),
	logstate.HWLoweredOffsets: newFamily("partition_high_watermark_lowered_offsets_total",
		"Offsets by which this replica's high watermark was lowered, summed over those WARNs (X − Y each).",
		Counter, partitionLabels...).
		withDoc("A lower bound of what the partition lost: X is this replica's own HW, which may lag the leader's.").
		rollsUp(Sum, ""),
})

// The log-derived high watermark of each partition.
var logHWFamily = newFamily("partition_log_high_watermark",
	"Last high watermark this broker's log showed for the partition.",
	Gauge, partitionLabels...).
	withDoc("From `High watermark updated`, `Log loaded … initial high watermark` and the leader/follower lines.").
	rollsUp(Sum, "")

// The two families both halves export: the admin half joins Metadata with
// the log's view; without the admin API (log-only mode) the log half exports
// its own view, for the partitions this broker leads.
var (
	isrFamily = newFamily("partition_in_sync_replicas",
		"In-sync replicas of the partition (Metadata joined with this broker's logs: the fresher wins; log-only mode: this broker's log, for partitions it leads).",
		Gauge, partitionLabels...).
		rollsUp(Sum, "Sum of in-sync replicas over the topic's exported partitions (Metadata joined with this broker's logs).")
	leaderEpochFamily = newFamily("partition_leader_epoch",
		"Leader epoch of the partition (Metadata joined with this broker's logs: the fresher wins; log-only mode: state-change.log, for partitions this broker "+
			"leads).",
		Gauge, partitionLabels...)
)

// The event totals, by logparse event type.
var (
	logEventsFamily    = newFamily("log_events_total", "Log records that parsed to a replication event, by logparse event type.", Counter, "type")
	logLastEventFamily = newFamily("log_last_event_timestamp_seconds",
		"Time of the last event of the type: its own timestamp, or when it was read if it has none.",
		Gauge, "type")
)

// logDirOfflineFamily is the broker's own account of a failed log
// directory: the sidecar beside a broker reads it without the admin API.
var logDirOfflineFamily = newFamily("log_dir_offline",
	"1 once this broker's log said it stopped serving the replicas in the log directory (a failed disk or mount), 0 after the broker started again.",
	Gauge, "broker", "dir").
	withDoc("From ReplicaManager's `Stopping serving replicas in dir …`; reset by the broker's start (`[BrokerServer id=N] Transition from SHUTDOWN " +
		"to STARTING`, ZooKeeper mode `starting`). `broker` is the id the line names. Only directories the log named have a series. " +
		"Alert: `KafkaBrokerLogDirOffline`.")

// The store's bound on partitions (logstate.DefaultMaxPartitions, --log.max-partitions).
var (
	logPartitionsFamily        = newFamily("log_partitions", "Partitions the exporter keeps log-derived state for.", Gauge)
	logPartitionsRefusedFamily = newFamily("log_partitions_refused_total",
		"Log events whose partition got no state because --log.max-partitions partitions were already kept.",
		Counter)
)

// The followers' own metrics, by file.
var (
	fileRecordsFamily   = newFamily("log_records_total", "Log records read (a header line plus its continuation lines).", Counter, "file")
	fileMalformedFamily = newFamily("log_records_malformed_total",
		"Physical lines dropped as malformed: binary junk, continuation lines without a header, parts of over-long lines.",
		Counter, "file")
	fileLinesFamily = newFamily("log_lines_total",
		"Physical lines read.",
		Counter, "file").
		withDoc("Counted as their record is applied, so that a line read again after a restart (the last record, held for its continuation lines) counts once.")
	fileRecognizedFamily = newFamily("log_records_recognized_total",
		"Log records read that Kafka logged in a layout the exporter knows.",
		Counter, "file").
		withDoc("A record whose header (date, level) is in a supported layout and whose message starts with one of Kafka's bracketed ident prefixes " +
			"(`[Partition …] `, `[GroupCoordinator id=1] `, …) or names a Kafka logger, whether or not it is a replication event. " +
			"Lines read while this stays flat mean a layout the exporter does not know: its events are lost " +
			"(`KafkaReplicationExporterLogLayoutUnknown`; a WARN after 200 lines in a row without one, once per change).")
	fileBytesFamily       = newFamily("log_bytes_total", "Bytes read.", Counter, "file")
	fileRotationsFamily   = newFamily("log_file_rotations_total", "Rename+create rotations followed (log4j's hourly roll).", Counter, "file")
	fileTruncationsFamily = newFamily("log_file_truncations_total", "copytruncate-style truncations detected (reading restarted at offset 0).", Counter, "file")
	filePositionFamily    = newFamily("log_file_position_bytes", "Read offset in the file currently followed.", Gauge, "file")
	fileLastReadFamily    = newFamily("log_file_last_read_timestamp_seconds",
		"Wall time the last line was read from the file (stale-log detection).",
		Gauge, "file")
	fileOpenFamily  = newFamily("log_file_open", "1 when the file (or stdin) is open and followed, 0 while it is missing or in error.", Gauge, "file")
	fileErrorFamily = newFamily("log_file_error",
		"1 for the reason the file cannot be followed right now, 0 for the other reasons.",
		Gauge, "file", "reason").
		withDoc("Reasons: `not_found`, `permission_denied`, `not_regular_file` (a directory, FIFO or device), `read_error`. " +
			"Each change of state is also logged once " +
			"at WARN.")
	fileErrorsFamily = newFamily("log_file_errors_total", "Times the file entered an error state, by reason.", Counter, "file", "reason")
)
