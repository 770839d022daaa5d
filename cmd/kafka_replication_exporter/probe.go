package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/metrics"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/secretfile"
)

// probeOptions are the --probe.* flags and what the targets share.
type probeOptions struct {
	path        string
	base        *poller.Config // the process's admin flags: what the file does not say
	series      metrics.PartitionSeries
	filter      func(string) bool
	maxTargets  int
	idleTimeout time.Duration
	maxRequests int // of /probe as a whole, as --web.max-requests is of /metrics
	maxRenders  int // per target
	watchEvery  time.Duration
}

// prober serves /probe?target=NAME: the admin families of one cluster of
// --probe.config-file, from a poller per cluster started by its first probe
// and stopped once it has not been probed for idleTimeout. A probe reads
// the poller's last snapshot, as /metrics does, and never waits on Kafka.
type prober struct {
	opts     probeOptions
	logger   *slog.Logger
	inFlight chan struct{} // nil = no limit
	registry prometheus.Gatherer

	mu          sync.Mutex
	cfg         *probeConfig    // the last good load
	lastRaw     []byte          // the contents of the last load tried, good or bad
	reloadOK    bool            // the last load tried succeeded
	lastSuccess time.Time       // of a load
	ctx         context.Context // the pollers' parent; nil until run
	active      map[string]*activeTarget
	refused     [metrics.NumProbeRefusals]uint64
	pollers     sync.WaitGroup
}

// activeTarget is one cluster being polled.
type activeTarget struct {
	t         *probeTarget
	handler   *exposition.MetricsHandler
	cancel    context.CancelFunc
	lastProbe atomic.Int64 // unix nanoseconds
}

// newProber loads the file: an error is the exporter's start-up error.
func newProber(opts probeOptions, logger *slog.Logger) (*prober, error) {
	pc, err := loadProbeConfig(opts.path, opts.base)
	if err != nil {
		return nil, err
	}
	p := &prober{
		opts: opts, logger: logger, registry: prometheus.NewRegistry(),
		cfg: pc, lastRaw: pc.raw, reloadOK: true, lastSuccess: time.Now(),
		active: make(map[string]*activeTarget),
	}
	if opts.maxRequests > 0 {
		p.inFlight = make(chan struct{}, opts.maxRequests)
	}
	return p, nil
}

// bind makes ctx the pollers' parent: probes start targets from now on.
func (p *prober) bind(ctx context.Context) {
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
}

// run reloads the file on hup and when its contents change, and stops idle
// targets, until ctx is done; then it waits for every poller to stop.
func (p *prober) run(ctx context.Context, hup <-chan os.Signal) {
	tick := time.NewTicker(min(p.opts.watchEvery, max(p.opts.idleTimeout/4, 10*time.Millisecond)))
	defer tick.Stop()
	lastWatch := time.Now()
	for {
		select {
		case <-ctx.Done():
			p.pollers.Wait()
			return
		case <-hup:
			p.logger.Info("SIGHUP: reloading --probe.config-file")
			p.reloadFile(true)
		case now := <-tick.C:
			if now.Sub(lastWatch) >= p.opts.watchEvery {
				lastWatch = now
				p.reloadFile(false)
			}
			p.stopIdle(now)
		}
	}
}

// reloadFile loads the file again; unless forced (SIGHUP), only when its
// contents differ from those of the last load tried. A bad file keeps the
// last good configuration and is logged at WARN once (per SIGHUP, or per
// change of the contents). Targets removed or changed are stopped: their
// next probe starts them with the new configuration.
func (p *prober) reloadFile(forced bool) {
	raw, err := secretfile.Read(p.opts.path, probeConfigLimit)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !forced && err == nil {
		if bytes.Equal(raw, p.cfg.raw) {
			if !p.reloadOK {
				p.logger.Info("--probe.config-file is back to the configuration in use")
			}
			p.lastRaw, p.reloadOK = raw, true
			return
		}
		if bytes.Equal(raw, p.lastRaw) {
			return // the bad contents already logged
		}
	}
	var pc *probeConfig
	if err == nil {
		p.lastRaw = raw
		pc, err = parseProbeConfig(p.opts.path, raw, p.opts.base)
	}
	if err != nil {
		if p.reloadOK || forced || raw != nil {
			p.logger.Warn("Reloading --probe.config-file failed: the previous configuration stays in use", "err", err)
		}
		p.reloadOK = false
		return
	}
	changed := !bytes.Equal(p.cfg.raw, pc.raw)
	p.cfg, p.reloadOK, p.lastSuccess = pc, true, time.Now()
	for name, at := range p.active {
		if nt, ok := pc.targets[name]; !ok || !reflect.DeepEqual(nt.file, at.t.file) {
			p.stopLocked(name, at)
		}
	}
	if changed {
		p.logger.Info("Loaded --probe.config-file", "targets", len(pc.targets))
	}
}

// stopIdle stops the targets not probed for idleTimeout.
func (p *prober) stopIdle(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, at := range p.active {
		if now.Sub(time.Unix(0, at.lastProbe.Load())) >= p.opts.idleTimeout {
			p.stopLocked(name, at)
		}
	}
}

// stopLocked stops a target's poller without waiting for it: a poller
// stuck in a request must not hold the lock every probe takes.
func (p *prober) stopLocked(name string, at *activeTarget) {
	delete(p.active, name)
	at.cancel()
	p.logger.Debug("Stopped polling a probe target", "target", name)
}

// target returns the active target name, starting its poller if need be;
// else the HTTP status and one line saying why not.
func (p *prober) target(name string) (*activeTarget, int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at := p.active[name]; at != nil {
		at.lastProbe.Store(time.Now().UnixNano())
		return at, 0, ""
	}
	t := p.cfg.targets[name]
	if t == nil {
		p.refused[metrics.ProbeUnknownTarget]++
		if len(name) > 128 {
			name = name[:128] + "…"
		}
		return nil, http.StatusNotFound, fmt.Sprintf("Unknown target %q: not a cluster of --probe.config-file.", name)
	}
	if p.ctx == nil || p.ctx.Err() != nil {
		return nil, http.StatusServiceUnavailable, "Shutting down."
	}
	if len(p.active) >= p.opts.maxTargets {
		p.refused[metrics.ProbeMaxTargets]++
		return nil, http.StatusServiceUnavailable, fmt.Sprintf("Target %s not started: %d targets are already active (--probe.max-targets); "+
			"a target not probed for --probe.idle-timeout (%s) stops and frees its place.", name, len(p.active), p.opts.idleTimeout)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	pl := poller.New(t.cfg, poller.Options{
		TopicFilter: p.opts.filter,
		Logger:      p.logger.With("component", "admin", "target", name),
	})
	direct := []exposition.TableSource{exposition.TableSource(metrics.NewAdminMetrics(pl, p.opts.series).Tables)}
	at := &activeTarget{
		t:       t,
		handler: exposition.NewMetricsHandler(p.registry, direct, p.logger, 0, p.opts.maxRenders),
		cancel:  cancel,
	}
	at.lastProbe.Store(time.Now().UnixNano())
	p.active[name] = at
	p.pollers.Add(1)
	go func() {
		defer p.pollers.Done()
		pl.Run(ctx)
	}()
	p.logger.Debug("Started polling a probe target", "target", name)
	return at, 0, ""
}

func (p *prober) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.inFlight != nil {
		select {
		case p.inFlight <- struct{}{}:
			defer func() { <-p.inFlight }()
		default:
			http.Error(w, fmt.Sprintf("Limit of concurrent requests reached (%d), try again later.", cap(p.inFlight)), http.StatusServiceUnavailable)
			return
		}
	}
	name := r.URL.Query().Get("target")
	if name == "" {
		http.Error(w, "Missing parameter target: /probe?target=NAME, NAME a cluster of --probe.config-file.", http.StatusBadRequest)
		return
	}
	at, status, msg := p.target(name)
	if at == nil {
		http.Error(w, msg, status)
		return
	}
	at.handler.ServeHTTP(w, r)
}

// stats is the multi-target half's state, for ProbeTables.
func (p *prober) stats() metrics.ProbeStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return metrics.ProbeStats{
		ReloadSuccessful: p.reloadOK,
		LastSuccess:      float64(p.lastSuccess.UnixNano()) / 1e9,
		Targets:          len(p.cfg.targets),
		Active:           len(p.active),
		Refused:          p.refused,
	}
}
