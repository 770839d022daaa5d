package poller

import (
	"log/slog"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// LogStore is the log half's state of this broker's partitions, as the
// poller reads and feeds it: every call from the admin half into the log
// half goes through it (internal/logstate's Store implements it). It is an
// interface so that the poller does not depend on how the log half keeps
// its state.
type LogStore interface {
	// LogPartitionState returns the ISR size and leader epoch last seen in this broker's own logs, with the wall
	// time each was read; ok is false when the logs said nothing about the partition.
	LogPartitionState(topic string, partition int32) (isrSize int, isrAt time.Time, leaderEpoch int64, epochAt time.Time, ok bool)
	// PendingISRShrink reports whether this broker, as the partition's
	// leader, logged an ISR shrink that the metadata does not show yet (the
	// controller has not committed it); false when the logs cannot tell.
	PendingISRShrink(topic string, partition int32) bool
	// ObserveISR hands over the ISR size Metadata reported for a partition
	// this sidecar exports, so that ISR changes the broker's log never
	// shows (a follower fenced by the controller) are counted too.
	ObserveISR(topic string, partition int32, size int)
	// Retain is told, after every successful Metadata read, which topics
	// exist and which partitions this broker hosts (hosted is nil while
	// this sidecar's broker id is unknown), so that the state of deleted
	// topics and of replicas moved away, and with it their series, goes.
	Retain(exists func(topic string) bool, hosted func(logparse.PartitionKey) bool)
	// LogBrokerID returns the broker id this broker's own log lines name
	// ("[Partition t-0 broker=1]", "[Broker id=1]"); ok is false until a
	// line named one, or when lines named several.
	LogBrokerID() (id int32, ok bool)
}

// sourceJoin merges the admin view of a partition with the log's: for the
// ISR size and the leader epoch the fresher reading wins. The logs see an ISR
// change the moment this broker applies it; Metadata lags by up to one
// refresh, but covers partitions whose logs say nothing.
type sourceJoin struct {
	logs   LogStore // nil: admin API only
	logger *slog.Logger
	// open holds disagreements already counted, so one conflict that
	// persists across refreshes (an old log reading nobody updated) is
	// counted once rather than once per refresh.
	open map[conflictKey]conflict
}

type conflictKey struct {
	logparse.PartitionKey
	field Field
}

type conflict struct {
	admin, log int64
	logAt      time.Time
}

func newSourceJoin(logs LogStore, logger *slog.Logger) *sourceJoin {
	return &sourceJoin{logs: logs, logger: logger, open: make(map[conflictKey]conflict)}
}

// join returns the ISR size and leader epoch to export for a partition whose
// Metadata was read at adminAt, and calls count for each new
// disagreement between the sources.
func (j *sourceJoin) join(k logparse.PartitionKey, adminISR int, adminEpoch int64, adminAt time.Time, count func(Field)) (int, int64) {
	if j.logs == nil {
		return adminISR, adminEpoch
	}
	logISR, isrAt, logEpoch, epochAt, ok := j.logs.LogPartitionState(k.Topic, k.Partition)
	if !ok {
		return adminISR, adminEpoch
	}
	isr := j.pick(k, FieldISR, int64(adminISR), adminAt, int64(logISR), isrAt, count)
	epoch := j.pick(k, FieldLeaderEpoch, adminEpoch, adminAt, logEpoch, epochAt, count)
	return int(isr), epoch
}

// observeISR tells the log store the Metadata ISR of an exported partition.
func (j *sourceJoin) observeISR(k logparse.PartitionKey, size int) {
	if j.logs != nil {
		j.logs.ObserveISR(k.Topic, k.Partition, size)
	}
}

// pendingShrink asks the log store about a shrink the metadata does not
// show; without a log store there is none to know of.
func (j *sourceJoin) pendingShrink(k logparse.PartitionKey) bool {
	return j.logs != nil && j.logs.PendingISRShrink(k.Topic, k.Partition)
}

// retain tells the log store what Metadata says exists and is hosted here.
func (j *sourceJoin) retain(exists func(string) bool, hosted func(logparse.PartitionKey) bool) {
	if j.logs != nil {
		j.logs.Retain(exists, hosted)
	}
}

// logBroker is the broker id the log lines name, if they name exactly one.
func (j *sourceJoin) logBroker() (int32, bool) {
	if j.logs == nil {
		return -1, false
	}
	return j.logs.LogBrokerID()
}

func (j *sourceJoin) pick(k logparse.PartitionKey, field Field, admin int64, adminAt time.Time, log int64, logAt time.Time, count func(Field)) int64 {
	if logAt.IsZero() {
		return admin // the logs never said anything about this field
	}
	ck := conflictKey{k, field}
	if admin == log {
		delete(j.open, ck)
		return admin
	}
	c := conflict{admin: admin, log: log, logAt: logAt}
	if prev, seen := j.open[ck]; !seen || prev != c {
		j.open[ck] = c
		count(field)
		j.logger.Debug("admin API and broker log disagree",
			"topic", k.Topic, "partition", k.Partition, "field", field.String(),
			"admin", admin, "admin_at", adminAt, "log", log, "log_at", logAt)
	}
	if logAt.After(adminAt) {
		return log
	}
	return admin
}
