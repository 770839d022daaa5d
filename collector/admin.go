package collector

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
)

// Admin polls the Kafka admin API in the background and exports the last
// result. A scrape never waits on Kafka: Collect renders the snapshot the
// last refresh left in memory. HW history lives here too, because stall and
// regression detection need readings taken at a steady pace, not at the
// pace of however many Prometheus servers scrape.
type Admin struct {
	cfg    *AdminConfig
	logger *slog.Logger
	now    func() time.Time // tests inject a clock

	snap  atomic.Pointer[adminSnapshot]
	ready atomic.Bool
	descs adminDescs

	// Owned by the refresh goroutine (Run, or a test calling refresh).
	sc       *sarama.Config
	pool     *brokerPool
	tracker  *hwTracker
	join     *sourceJoin
	minISR   map[string]int // configured min.insync.replicas by topic, kept across refreshes
	ids      idStrings      // partition and broker ids as label values
	brokerID int32          // configured or detected; -1 = unknown
	brokers  map[int32]string
	gen      uint64
	counts   adminCounters
	noIDWarn bool
}

var _ prometheus.Collector = (*Admin)(nil)

// NewAdmin prepares the poller. It neither blocks nor fails when Kafka is
// down: connections are made by Run. cfg must have passed Validate.
func NewAdmin(cfg *AdminConfig, logger *slog.Logger, overlay LogOverlay) *Admin {
	a := &Admin{
		cfg:      cfg,
		logger:   logger,
		now:      time.Now,
		descs:    newAdminDescs(cfg.PartitionLabels),
		tracker:  newHWTracker(cfg.StallThreshold),
		join:     newSourceJoin(overlay, logger),
		minISR:   make(map[string]int),
		brokerID: cfg.BrokerID,
	}
	sc := cfg.sarama
	if sc == nil {
		var err error
		if sc, err = cfg.buildSarama(); err != nil {
			// Validate would have said so; keep exporting up=0 rather
			// than crash a sidecar whose log half still works.
			logger.Error("Kafka admin configuration is invalid; admin metrics disabled", "err", err)
		}
	}
	a.sc = sc
	if sc != nil {
		a.pool = newBrokerPool(sc)
	}
	a.snap.Store(&adminSnapshot{})
	return a
}

// Ready reports whether the first refresh has been attempted, successful or not.
func (a *Admin) Ready() bool { return a.ready.Load() }

// Run refreshes every RefreshInterval until ctx is done. With
// --kafka.partition-log-level it raises the broker logger once this broker
// is known and restores it on the way out.
func (a *Admin) Run(ctx context.Context) {
	if a.pool == nil {
		a.ready.Store(true)
		<-ctx.Done()
		return
	}
	defer a.pool.close()
	level := newLogLevelRaise(a.cfg.PartitionLogLevel)
	defer level.restore(a)

	ticker := time.NewTicker(a.cfg.RefreshInterval)
	defer ticker.Stop()
	for {
		a.refresh()
		level.raise(a)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
