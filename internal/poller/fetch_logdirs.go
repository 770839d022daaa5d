package poller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/IBM/sarama"
)

// A fetcher (--collector.log-dirs, on by default): which log directories of
// the brokers this sidecar speaks for have failed. A broker whose disk or
// mount fails stays up and answers KAFKA_STORAGE_ERROR for that directory;
// Metadata only lists its replicas there as offline, without the directory.
// One DescribeLogDirs per broker, asking for no partition: the broker then
// answers one entry per directory and no partition (Kafka 4.4.0, in
// TestLogDirFailure; brokers whose handler does not drop the topics left
// empty name each topic they host, still without partitions). It still
// walks its logs once per request to group them by directory.
//
// Which brokers: in leader scope each sidecar asks its own broker only, so
// that every broker's directories are exported once, by the sidecar beside
// it (a sidecar whose broker id is not known asks none); in cluster scope,
// every broker Metadata advertises.

// logDirPlaceholder is the one topic the request names, with no partition.
// The topic list must not be empty: sarama encodes an empty list as null,
// which asks for every partition of every directory (the answer at 100k
// partitions is megabytes); a topic with no partition asks for none.
const logDirPlaceholder = "kafka_replication_exporter"

// logDirRead is one broker's DescribeLogDirs answer.
type logDirRead struct {
	broker int32
	ok     bool     // answered without a request-wide error
	dirs   []LogDir // its usable directories, by path
	err    error    // why not ok, or why a directory was left out
}

// logDirBrokers are the brokers whose log directories a sidecar exports
// (see above), by id.
func logDirBrokers(brokers map[int32]string, brokerID int32, cluster bool) []int32 {
	if cluster {
		return slices.Sorted(maps.Keys(brokers))
	}
	if _, ok := brokers[brokerID]; ok && brokerID >= 0 {
		return []int32{brokerID}
	}
	return []int32{}
}

// fetchLogDirs asks each broker of p.logDirBrokers, by that order; nil when
// the read is off.
func fetchLogDirs(ctx context.Context, r *round, p *refreshPlan) []logDirRead {
	if p.logDirBrokers == nil {
		return nil
	}
	got := make([]logDirRead, len(p.logDirBrokers))
	var wg sync.WaitGroup
	for i, id := range p.logDirBrokers {
		got[i].broker = id
		addr := r.brokers[id]
		wg.Go(func() {
			ctx, cancel := r.deadline(ctx, id)
			defer cancel()
			dirs, answered, err := r.pool.describeLogDirs(ctx, addr, id)
			r.record(id, answered)
			if err != nil {
				r.fail(RequestDescribeLogDirs, id, err)
			}
			got[i].ok, got[i].dirs, got[i].err = answered && (err == nil || len(dirs) > 0), dirs, err
		})
	}
	wg.Wait()
	return got
}

// logDirsRequest asks for every log directory and no partition.
func logDirsRequest(v sarama.KafkaVersion) *sarama.DescribeLogDirsRequest {
	return &sarama.DescribeLogDirsRequest{
		Version:        describeLogDirsVersion(v),
		DescribeTopics: []sarama.DescribeLogDirsRequestTopic{{Topic: logDirPlaceholder, PartitionIDs: []int32{}}},
	}
}

// describeLogDirs sends one DescribeLogDirs to broker id at addr. answered
// is whether the broker answered at all; err, when it also answered, is a
// request-wide error (authorization) or a directory left out for an error
// other than KAFKA_STORAGE_ERROR.
func (p *brokerPool) describeLogDirs(ctx context.Context, addr string, id int32) (dirs []LogDir, answered bool, err error) {
	req := logDirsRequest(p.conf.Version)
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeLogDirsResponse, error) { return b.DescribeLogDirs(req) })
	if err != nil {
		return nil, false, fmt.Errorf("describe log dirs from %s: %w", addr, err)
	}
	dirs, err = readLogDirs(resp, id)
	if err != nil {
		err = fmt.Errorf("describe log dirs from %s: %w", addr, err)
	}
	return dirs, true, err
}

// readLogDirs sorts an answer into directories online and offline; one
// answered with another error says nothing about its disk and is left out.
func readLogDirs(resp *sarama.DescribeLogDirsResponse, id int32) ([]LogDir, error) {
	if !errors.Is(resp.ErrorCode, sarama.ErrNoError) {
		return nil, resp.ErrorCode
	}
	var (
		dirs []LogDir
		errs []error
	)
	for _, d := range resp.LogDirs {
		switch {
		case errors.Is(d.ErrorCode, sarama.ErrNoError):
			dirs = append(dirs, LogDir{Broker: id, Path: d.Path})
		case errors.Is(d.ErrorCode, sarama.ErrKafkaStorageError):
			dirs = append(dirs, LogDir{Broker: id, Path: d.Path, Offline: true})
		default:
			errs = append(errs, fmt.Errorf("log dir %s: %w", d.Path, d.ErrorCode))
		}
	}
	slices.SortFunc(dirs, func(x, y LogDir) int { return strings.Compare(x.Path, y.Path) })
	return dirs, errors.Join(errs...)
}

// describeLogDirsVersion mirrors sarama's ClusterAdmin choice.
func describeLogDirsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V3_3_0_0):
		return 4
	case v.IsAtLeast(sarama.V3_2_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_6_0_0):
		return 2
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 1
	}
	return 0
}

// logDirKey names one broker's directory.
type logDirKey struct {
	broker int32
	path   string
}

// logDirWatch remembers the last refresh's answers, to log each change once:
// a directory going offline or back, a broker that stops answering or
// answers again. Only the refresh goroutine uses it.
type logDirWatch struct {
	logger  *slog.Logger
	silent  map[int32]bool     // brokers whose last answer was unusable
	offline map[logDirKey]bool // directories last answered offline
}

// observe turns one refresh's reads into the snapshot's directories (nil
// when the read is off), logging what changed.
func (w *logDirWatch) observe(reads []logDirRead) []LogDir {
	if reads == nil {
		return nil
	}
	out := []LogDir{}
	silent := make(map[int32]bool)
	offline := make(map[logDirKey]bool)
	for _, rd := range reads {
		if !rd.ok {
			silent[rd.broker] = true
			if !w.silent[rd.broker] {
				w.logger.Warn("DescribeLogDirs failed; the broker's kafka_replication_broker_log_dir_offline series are dropped until it answers",
					"broker", rd.broker, "err", rd.err)
			}
			// What it last said still stands for the next change.
			for k := range w.offline {
				if k.broker == rd.broker {
					offline[k] = true
				}
			}
			continue
		}
		if w.silent[rd.broker] {
			w.logger.Info("DescribeLogDirs answered again", "broker", rd.broker)
		}
		for _, d := range rd.dirs {
			k := logDirKey{d.Broker, d.Path}
			switch {
			case d.Offline && !w.offline[k]:
				w.logger.Warn("Kafka log directory offline: the broker answered KAFKA_STORAGE_ERROR, its replicas there are offline until it restarts",
					"broker", d.Broker, "dir", d.Path)
			case !d.Offline && w.offline[k]:
				w.logger.Info("Kafka log directory online again", "broker", d.Broker, "dir", d.Path)
			}
			if d.Offline {
				offline[k] = true
			}
		}
		out = append(out, rd.dirs...)
	}
	w.silent, w.offline = silent, offline
	slices.SortStableFunc(out, func(x, y LogDir) int { return cmp.Compare(x.Broker, y.Broker) })
	return out
}
