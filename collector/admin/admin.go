package admin

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin/elr"
)

// Poller polls the Kafka admin API in the background and keeps the last
// result as a Snapshot. A scrape never waits on Kafka: it reads the snapshot
// the last refresh left in memory. HW history lives here too, because stall
// and regression detection need readings taken at a steady pace, not at the
// pace of however many Prometheus servers scrape.
type Poller struct {
	cfg    *Config
	opts   Options
	logger *slog.Logger
	now    func() time.Time // tests inject a clock

	snap  atomic.Pointer[Snapshot]
	ready atomic.Bool

	// Owned by the refresh goroutine (Run, or a test calling refresh).
	pool     *brokerPool
	elr      *elr.Reader // nil: ELR is not read (elr_fetch.go)
	tracker  *hwTracker
	join     *sourceJoin
	minISR   map[string]int // configured min.insync.replicas by topic, kept across refreshes
	brokerID int32          // configured or detected; -1 = unknown
	brokers  map[int32]string
	gen      uint64
	counts   counters
	noIDWarn bool
}

// Options is how the poller is wired into the sidecar; Config is what the
// user asked for.
type Options struct {
	// TopicFilter selects the topics whose partitions are exported; nil = every topic.
	TopicFilter func(topic string) bool
	// OnMetadata, when set, is called after every successful metadata
	// refresh with what exists and what this sidecar's broker hosts, so that
	// the log-derived state of deleted topics and of replicas moved away
	// (and with it their series) can be dropped. hosted is nil while this
	// sidecar's broker id is unknown.
	OnMetadata func(exists func(topic string) bool, hosted func(topic string, partition int32) bool)
	// LogView is this broker's log-derived state, joined with Metadata; nil = admin API only.
	LogView LogView
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// New prepares the poller. It neither blocks nor fails when Kafka is down:
// connections are made by Run. With no servers configured (log-only mode)
// the poller stays idle and reports up=0.
func New(cfg *Config, opts Options) *Poller {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	p := &Poller{
		cfg:      cfg,
		opts:     opts,
		logger:   logger,
		now:      time.Now,
		tracker:  newHWTracker(cfg.StallThreshold),
		join:     newSourceJoin(opts.LogView, logger),
		minISR:   make(map[string]int),
		brokerID: cfg.BrokerID,
	}
	p.snap.Store(&Snapshot{})
	if len(cfg.Servers) == 0 {
		return p
	}
	sc, ec, err := cfg.clientConfigs()
	if err != nil {
		// Validate would have said so; keep exporting up=0 rather than
		// crash a sidecar whose log half still works.
		logger.Error("Kafka admin configuration is invalid; admin metrics disabled", "err", err)
		return p
	}
	ec.Tokens.SetLogger(logger) // nil-safe; sarama's provider shares this source
	p.pool = newBrokerPool(sc)
	p.elr = newELRReader(ec, logger)
	return p
}

// Snapshot returns the result of the last refresh. It is immutable: callers
// may keep it and read it from any goroutine.
func (p *Poller) Snapshot() *Snapshot { return p.snap.Load() }

// Ready reports whether the first refresh has been attempted, successful or not.
func (p *Poller) Ready() bool { return p.ready.Load() }

// Run refreshes every RefreshInterval until ctx is done. With
// --kafka.partition-log-level it raises the broker logger once this broker
// is known and restores it on the way out.
func (p *Poller) Run(ctx context.Context) {
	if p.pool == nil {
		p.ready.Store(true)
		<-ctx.Done()
		return
	}
	defer p.pool.close()
	defer p.closeELR()
	level := newLogLevelRaise(p.cfg.PartitionLogLevel)
	defer level.restore(p)

	ticker := time.NewTicker(p.cfg.RefreshInterval)
	defer ticker.Stop()
	for {
		p.refresh(ctx)
		level.raise(p)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
