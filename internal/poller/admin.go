package poller

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Poller polls the Kafka admin API in the background and keeps the last
// result as a Snapshot. A scrape never waits on Kafka: it reads the snapshot
// the last refresh left in memory. HW history lives here too, because stall
// and regression detection need readings taken at a steady pace, not at the
// pace of however many Prometheus servers scrape.
type Poller struct {
	// refresher is the refresh goroutine's state (Run, or a test calling
	// refresh).
	refresher
	level *logLevelRaise // nil without servers

	snap  atomic.Pointer[Snapshot]
	ready atomic.Bool
}

// Options is how the poller is wired into the sidecar; Config is what the
// user asked for.
type Options struct {
	// TopicFilter selects the topics whose partitions are exported; nil = every topic.
	TopicFilter func(topic string) bool
	// LogStore is this broker's log-derived state, joined with Metadata and
	// told what Metadata says; nil = admin API only.
	LogStore LogStore
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
	p := &Poller{refresher: refresher{
		cfg:      cfg,
		filter:   opts.TopicFilter,
		logger:   logger,
		now:      time.Now,
		brokerID: cfg.BrokerID,
		lookup:   lookupHost,
		host:     ownAddrs(),
		build:    newBuilder(cfg, opts.LogStore, logger),
		quorumW:  quorumWatch{logger: logger},
	}}
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
	p.quorum = newQuorumReader(ec)
	p.tiering = newTieringReader(cfg, ec, logger)
	p.groups = newGroupCollector(&cfg.Groups, logger)
	p.shares = newShareGroupReader(&cfg.Groups, ec, logger)
	p.level = newLogLevelRaise(cfg.PartitionLogLevel, p.pool, cfg.RequestTimeout, logger)
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
	if p.elr != nil {
		defer p.elr.Close()
	}
	defer p.quorum.close()
	defer p.tiering.close()
	defer p.shares.close()
	defer p.level.restore()

	ticker := time.NewTicker(p.cfg.RefreshInterval)
	defer ticker.Stop()
	for {
		p.refresh(ctx)
		p.raiseLogLevel()
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// refresh runs one refresh and publishes its snapshot, with the counters.
func (p *Poller) refresh(ctx context.Context) {
	defer p.ready.Store(true)
	s := p.refresher.refresh(ctx, p.snap.Load())
	s.RequestErrors = p.errors
	s.UnusableAnswers = p.unusable
	if p.level != nil {
		s.RequestErrors[RequestAlterLogLevel] += p.level.errors
	}
	s.Disagreements = p.build.disagreements
	s.Sent = p.sent()
	s.BrokerIdentified, s.LeaderScope = p.brokerID >= 0, p.cfg.Scope == ScopeLeader
	p.snap.Store(s)
}

// raiseLogLevel raises the broker logger (loglevel.go) once this broker is
// known and answered the last refresh.
func (p *Poller) raiseLogLevel() {
	responsive := true
	for _, b := range p.Snapshot().Brokers {
		if b.ID == p.brokerID {
			responsive = b.Responsive
		}
	}
	p.level.raise(p.brokerID, p.brokers[p.brokerID], responsive)
}

// sent says which requests this poller sends: every one but the opt-in
// reads that are off.
func (p *Poller) sent() (out [NumRequests]bool) {
	for r := range NumRequests {
		out[r] = !r.OptIn()
	}
	if p.groups != nil {
		out[RequestListGroups], out[RequestDescribeGroups], out[RequestOffsetFetch] = true, true, true
	}
	out[RequestListOffsetsLSO] = p.cfg.Groups.LastStableOffset
	out[RequestListOffsetsTiered] = p.tiering != nil
	out[RequestListShareGroups], out[RequestDescribeShareGroupOffsets] = p.shares != nil, p.shares != nil
	return out
}
