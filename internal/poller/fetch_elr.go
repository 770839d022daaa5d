package poller

import (
	"context"
	"errors"
	"log/slog"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
)

// A fetcher: each exported partition's Eligible Leader Replicas (KIP-966),
// through package elr, which speaks DescribeTopicPartitions.

// newELRReader makes the reader of each partition's Eligible Leader Replicas
// (KIP-966), or nil when it refuses the configuration: the rest of the
// poller then works as before and no ELR series is exported.
func newELRReader(cfg elr.Config, logger *slog.Logger) *elr.Reader {
	r, err := elr.New(cfg)
	if err != nil {
		logger.Error("Cannot read Eligible Leader Replicas; ELR series disabled", "err", err)
		return nil
	}
	return r
}

// elrTopics returns the topics to describe and whether to read at all. In
// leader scope only the topics this sidecar exports are described, or every
// sidecar would read the whole cluster each refresh; with every topic
// exported, asking for all of them is the shorter request.
func elrTopics(p *refreshPlan) ([]string, bool) {
	if len(p.configTopics) == 0 {
		return nil, false
	}
	if p.everyTopic {
		return nil, true
	}
	return p.configTopics, true
}

// fetchELR reads the ELR of the plan's exported topics within ctx. It
// returns nil, and no ELR series are exported this refresh, when there is
// no reader or nothing to describe, when the broker lacks the API or the
// cluster has ELR off (neither is an error), and when the read fails
// (counted).
func fetchELR(ctx context.Context, r *round, p *refreshPlan, reader *elr.Reader) *elr.Result {
	if reader == nil {
		return nil
	}
	topics, ok := elrTopics(p)
	if !ok {
		return nil
	}
	res, err := reader.Read(ctx, topics)
	switch {
	case errors.Is(err, elr.ErrUnsupported):
		r.logger.Debug("The broker does not implement DescribeTopicPartitions; no ELR series", "err", err)
		return nil
	case err != nil:
		r.fail(RequestDescribeTopicPartitions, -1, err)
		return nil
	case !res.Enabled:
		return nil
	}
	for topic, err := range res.TopicErrors {
		// Deleted since Metadata, or not authorized: that topic has no
		// ELR series this refresh, the others do.
		r.logger.Debug("DescribeTopicPartitions left a topic out", "topic", topic, "err", err)
	}
	return res
}

// setELR copies a partition's ELR sizes from the refresh's read, if it
// described the partition.
func (s *Partition) setELR(res *elr.Result) {
	if res == nil {
		return
	}
	got, ok := res.Lookup(s.Topic, s.Partition)
	if !ok {
		return
	}
	s.ELRKnown, s.ELR, s.LastKnownELR = true, int32(len(got.ELR)), int32(len(got.LastKnownELR))
}
