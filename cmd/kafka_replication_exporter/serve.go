package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/metrics"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// defaultListenAddress is outside the Kafka monitoring ports people already run
// beside a broker: kafka_exporter 9308, the JMX exporter's usual 7071/9404/5556,
// KMinion 8080, Burrow and Kafka Lag Exporter 8000.
const defaultListenAddress = ":9742"

// positionSaveInterval bounds how much is applied twice after a SIGKILL: the
// positions saved are those of the events applied, so a stop that saves them
// (SIGTERM, SIGINT, SIGHUP) repeats nothing.
const positionSaveInterval = time.Second

// HTTP server timeouts. A client that sends a request and then stops reading
// holds a --web.max-requests slot until its write times out, and an idle
// keep-alive connection holds a file descriptor until it is reaped.
const (
	// readHeaderTimeout is for slowloris clients that never finish a request.
	readHeaderTimeout = 10 * time.Second
	// defaultWriteTimeout is three times Prometheus' default scrape timeout
	// and far above what a 100k-partition scrape takes, so only a client
	// that stopped reading runs into it.
	defaultWriteTimeout = "30s"
	// idleTimeout outlasts the 1-minute default scrape interval, so
	// Prometheus keeps its connection between scrapes, while abandoned
	// keep-alive connections are closed.
	idleTimeout = 2 * time.Minute
)

// probeWatchInterval is how often --probe.config-file is read to see
// whether it changed: a ConfigMap update reaches the pod within a minute.
const probeWatchInterval = 10 * time.Second

type serveCommand struct {
	cmd           *kingpin.CmdClause
	web           *web.FlagConfig
	addressFile   *string
	metricsPath   *string
	noExporterMet *bool
	maxRequests   *int
	maxRenders    *int
	writeTimeout  *time.Duration
	idleTimeout   time.Duration // the idleTimeout constant; tests shorten it

	logFiles      *[]string
	fromBeginning *bool
	positionFile  *string
	pollInterval  *time.Duration
	maxPartitions *int

	topicInclude    *string
	topicExclude    *string
	partitionLabels *bool
	partitionSeries *string

	admin *poller.Config

	probeFile        *string
	probeMaxTargets  *int
	probeIdleTimeout *time.Duration
	probeWatchEvery  time.Duration // how often the file is checked for changes; tests shorten it

	autoMemLimit      *bool
	autoMemLimitRatio *float64
}

func newServeCommand(app *kingpin.Application) *serveCommand {
	cmd := app.Command("serve", "Run the sidecar: follow the broker's logs, poll the admin API, serve /metrics (the default command).").Default()
	s := &serveCommand{cmd: cmd, idleTimeout: idleTimeout, probeWatchEvery: probeWatchInterval}
	s.web = kingpinflag.AddFlags(cmd, defaultListenAddress)
	s.addressFile = cmd.Flag("web.listen-address-file", "File to write the bound --web.listen-address to (host:port, one a line), "+
		"once listening and before serving, through a temporary file renamed into place: with port 0, how a supervisor learns the port. "+
		"Removed at exit; a SIGKILL leaves it behind, so remove it before starting. TCP addresses only.").String()
	s.metricsPath = cmd.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String()
	s.noExporterMet = cmd.Flag("web.disable-exporter-metrics", "Exclude the exporter's own Go and process metrics.").Bool()
	s.maxRequests = cmd.Flag("web.max-requests", "Maximum number of parallel scrape requests (0 = no limit).").Default("40").Int()
	s.maxRenders = cmd.Flag("web.max-renders", "Maximum number of scrape bodies rendered at once; a request that cannot share a body being rendered "+
		"(another encoding or name[]) waits for its turn. Each render of a full scrape holds memory of the order of the state it renders.").Default("1").Int()
	s.writeTimeout = cmd.Flag("web.write-timeout", "Maximum time to answer one request, body included: "+
		"a client that reads slower is cut off and its --web.max-requests slot freed (0 = no limit).").Default(defaultWriteTimeout).Duration()

	s.logFiles = cmd.Flag("log.file", "Broker log file to follow (repeatable): server.log, state-change.log, controller.log, "+
		"a Kubernetes CRI log file, or - for stdin. None: admin-only mode.").Strings()
	s.fromBeginning = cmd.Flag("log.from-beginning", "Read the log files from the beginning instead of the end (when there is no saved position).").Bool()
	s.positionFile = cmd.Flag("log.position-file", "File in which to keep the read position of every log file "+
		"(including files rotated while the exporter was down): the position of the last event applied, saved every second and at a clean stop, "+
		"so a restart neither loses nor double-counts events; after a SIGKILL, at most the events of the last second are counted again.").String()
	s.pollInterval = cmd.Flag("log.poll-interval", "How often the log files are checked for new lines, rotation and truncation.").Default("250ms").Duration()
	s.maxPartitions = cmd.Flag("log.max-partitions", "Most partitions to keep log-derived state for; "+
		"events of further partitions are counted in kafka_replication_log_partitions_refused_total.").Default(strconv.Itoa(logstate.DefaultMaxPartitions)).Int()

	s.topicInclude = cmd.Flag("collector.topic-include", "Regular expression of topics to export partition series for.").Default(".*").String()
	s.topicExclude = cmd.Flag("collector.topic-exclude", "Regular expression of topics not to export.").Default("").String()
	s.partitionLabels = cmd.Flag("collector.partition-labels",
		"Export per-partition series; --no-collector.partition-labels rolls them up per topic (for very many partitions).").Default("true").Bool()
	s.partitionSeries = cmd.Flag("collector.partition-series",
		"Which partitions have series of their own: all, or unhealthy (offline, under-replicated, "+
			"no ISR headroom, stalled or regressed HW, reassigning, unanswered, or a consumer group starved or behind on it); "+
			"the others are summed per topic under the same names, and the log half's counters are per topic.").Default("all").Enum("all", "unhealthy")

	s.admin = poller.AddFlags(cmd)

	s.probeFile = cmd.Flag("probe.config-file", "YAML file naming the Kafka clusters that /probe?target=NAME serves, "+
		"each with its servers, TLS, SASL and refresh interval (docs/deployment.md, \"Fifty managed clusters\"); "+
		"the other --kafka.* and --collector.* flags apply to every one, in cluster scope. Reloaded on SIGHUP and when its contents change; "+
		"with it, SIGHUP no longer stops the exporter.").String()
	s.probeMaxTargets = cmd.Flag("probe.max-targets", "Most clusters of --probe.config-file polled at once; "+
		"a probe of one more is refused (503) until another has gone --probe.idle-timeout without a probe.").Default("64").Int()
	s.probeIdleTimeout = cmd.Flag("probe.idle-timeout", "How long a cluster of --probe.config-file is polled after its last probe; "+
		"a few scrape intervals.").Default("5m").Duration()

	s.autoMemLimit = cmd.Flag("auto-gomemlimit", "Set the Go runtime's soft memory limit (GOMEMLIMIT) from the container's memory limit "+
		"(cgroup v1 or v2), unless GOMEMLIMIT is set.").Default("true").Bool()
	s.autoMemLimitRatio = cmd.Flag("auto-gomemlimit.ratio", "Fraction of the container's memory limit to give the Go runtime, in (0, 1].").
		Default("0.9").Float64()
	return s
}

// topicFilter compiles the include/exclude flags (anchored, as node_exporter does).
func (s *serveCommand) topicFilter() (func(string) bool, error) {
	inc, err := regexp.Compile("^(?:" + *s.topicInclude + ")$")
	if err != nil {
		return nil, fmt.Errorf("--collector.topic-include: %w", err)
	}
	var exc *regexp.Regexp
	if *s.topicExclude != "" {
		if exc, err = regexp.Compile("^(?:" + *s.topicExclude + ")$"); err != nil {
			return nil, fmt.Errorf("--collector.topic-exclude: %w", err)
		}
	}
	if *s.topicInclude == ".*" && exc == nil {
		return nil, nil // the default: every topic, no regexp to run
	}
	return func(topic string) bool {
		return inc.MatchString(topic) && (exc == nil || !exc.MatchString(topic))
	}, nil
}

func (s *serveCommand) validate() (func(string) bool, error) {
	*s.logFiles = stdinArgs(*s.logFiles)
	filter, err := s.topicFilter()
	if err != nil {
		return nil, err
	}
	if *s.maxPartitions <= 0 {
		return nil, errors.New("--log.max-partitions must be positive")
	}
	if *s.partitionSeries == "unhealthy" && !*s.partitionLabels {
		return nil, errors.New("--collector.partition-series=unhealthy needs partition labels: drop --no-collector.partition-labels")
	}
	if *s.partitionSeries == "unhealthy" && len(s.admin.Servers) == 0 && *s.probeFile == "" {
		return nil, errors.New("--collector.partition-series=unhealthy needs the admin API (--kafka.server) to tell which partitions are unhealthy")
	}
	if len(*s.logFiles) == 0 && len(s.admin.Servers) == 0 && *s.probeFile == "" {
		return nil, errors.New("nothing to do: give --log.file (the broker's logs), --kafka.server (the admin API) and/or --probe.config-file")
	}
	if *s.probeMaxTargets < 1 {
		return nil, errors.New("--probe.max-targets must be at least 1")
	}
	if *s.probeIdleTimeout <= 0 {
		return nil, errors.New("--probe.idle-timeout must be positive")
	}
	stdin := 0
	for _, f := range *s.logFiles {
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return nil, errors.New("--log.file - (stdin) can be given only once")
	}
	if err := distinctFiles(*s.logFiles); err != nil {
		return nil, err
	}
	if r := *s.autoMemLimitRatio; !(r > 0 && r <= 1) {
		return nil, errors.New("--auto-gomemlimit.ratio must be in (0, 1]")
	}
	if *s.writeTimeout < 0 {
		return nil, errors.New("--web.write-timeout must not be negative")
	}
	if *s.maxRenders < 1 {
		return nil, errors.New("--web.max-renders must be at least 1")
	}
	// exporter-toolkit would read the file only when serving starts, and
	// its error would then look like a runtime failure.
	if err := web.Validate(*s.web.WebConfigFile); err != nil {
		return nil, fmt.Errorf("--web.config.file: %s", oneLine(err.Error()))
	}
	// Without --kafka.server the admin flags are only the probe targets'
	// defaults, checked with each target's servers when the file is loaded.
	if len(s.admin.Servers) > 0 || *s.probeFile == "" {
		if err := s.admin.Validate(); err != nil {
			return nil, err
		}
	}
	if *s.addressFile != "" {
		if *s.web.WebSystemdSocket {
			return nil, errors.New("--web.listen-address-file names TCP listeners the exporter opens: not with --web.systemd-socket")
		}
		for _, a := range *s.web.WebListenAddresses {
			if strings.HasPrefix(a, "vsock://") {
				return nil, fmt.Errorf("--web.listen-address-file names TCP listeners: not with --web.listen-address=%s", a)
			}
		}
	}
	return filter, nil
}

// oneLine joins a multi-line error (YAML's list of unmarshal errors) into
// one line, as every other configuration error is.
func oneLine(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

// httpServer is the server for handler, with the timeouts that keep stuck and
// idle clients from holding slots and file descriptors.
func (s *serveCommand) httpServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      *s.writeTimeout,
		IdleTimeout:       s.idleTimeout,
	}
}

func (s *serveCommand) run(logger *slog.Logger, loc *time.Location, stderr io.Writer) int {
	filter, err := s.validate()
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", programName, err)
		return exitUsage
	}
	logger.Info("Starting "+programName, "version", version.Info())
	logger.Info("Build context", "build_context", version.BuildContext())
	if *s.autoMemLimit {
		setMemoryLimit(*s.autoMemLimitRatio, logger)
	}
	if os.Geteuid() == 0 {
		logger.Warn("Running as root: the sidecar only needs read access to the broker's log directory")
	}

	// SIGHUP stops the exporter as SIGTERM does, positions saved, unless
	// there is a --probe.config-file to reload: the default action would
	// exit unsaved.
	stopSignals := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	if *s.probeFile != "" {
		stopSignals = stopSignals[:2]
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()

	sidecar, err := newSidecar(s, filter, loc, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", programName, err)
		return exitUsage
	}
	defer sidecar.close()
	if sidecar.probe != nil {
		signal.Notify(sidecar.hup, syscall.SIGHUP)
		defer signal.Stop(sidecar.hup)
	}
	serve := func(srv *http.Server) error { return web.ListenAndServe(srv, s.web, logger) }
	if *s.addressFile != "" {
		// Listening first, so that the file names a port this process holds.
		ls, err := listenTCP(*s.web.WebListenAddresses)
		if err != nil {
			logger.Error("Web server stopped", "err", err)
			return exitViolation
		}
		defer closeListeners(ls)
		if err := writeAddressFile(*s.addressFile, ls); err != nil {
			logger.Error("Writing --web.listen-address-file failed", "err", err)
			return exitViolation
		}
		defer os.Remove(*s.addressFile)
		serve = func(srv *http.Server) error { return web.ServeMultiple(ls, srv, s.web, logger) }
	}
	var wg sync.WaitGroup
	sidecar.start(ctx, &wg)

	srv := s.httpServer(sidecar.handler(s))
	errc := make(chan error, 1)
	go func() { errc <- serve(srv) }()
	select {
	case err := <-errc:
		stop()
		wg.Wait()
		logger.Error("Web server stopped", "err", err)
		return exitViolation
	case <-ctx.Done():
	}
	logger.Info("Shutting down", "cause", context.Cause(ctx))
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("Closing the open connections timed out", "err", err)
	}
	wg.Wait()
	if err := sidecar.savePositions(); err != nil {
		logger.Error("Saving log positions at shutdown failed: a restart resumes from the last positions saved", "err", err)
		return exitViolation
	}
	return exitOK
}

// sidecar holds the running parts of `serve`.
type sidecar struct {
	logger    *slog.Logger
	store     *logstate.Store
	files     []*logstate.LogFile
	stream    *logstate.Stream
	admin     *poller.Poller
	positions *tail.PositionStore
	saved     []tail.Position // the last positions written
	// registry holds the standard collectors (build info, Go, process);
	// direct is the state the metrics handler writes itself (every
	// kafka_replication_* family).
	registry *prometheus.Registry
	direct   []exposition.TableSource
	// probe serves /probe (--probe.config-file), reloaded on hup; nil
	// without the flag.
	probe *prober
	hup   chan os.Signal
}

func newSidecar(s *serveCommand, filter func(string) bool, loc *time.Location, logger *slog.Logger) (*sidecar, error) {
	sc := &sidecar{logger: logger, store: logstate.NewStore(filter), registry: prometheus.NewRegistry()}
	sc.store.SetMaxPartitions(*s.maxPartitions)
	var saved map[string]tail.Position
	if *s.positionFile != "" {
		// Locked for the process's lifetime: a second exporter on the same
		// file would overwrite this one's positions. Load's problems (an
		// empty or torn file, a damaged entry) are logged and counted.
		sc.positions = tail.NewPositionStore(*s.positionFile).WithLogger(logger)
		if err := sc.positions.Lock(); err != nil {
			return nil, fmt.Errorf("--log.position-file: %w", err)
		}
		var err error
		if saved, _, err = sc.positions.Load(); err != nil {
			sc.positions.Close()
			return nil, fmt.Errorf("--log.position-file: %w", err)
		}
		sc.direct = append(sc.direct, metrics.PositionTables(sc.positions))
	}
	for _, path := range *s.logFiles {
		opts := logstate.LogFileOptions{
			FromBeginning: *s.fromBeginning,
			PollInterval:  *s.pollInterval,
			Location:      loc,
			Logger:        logger, // the follower names the file in its lines
		}
		if p, ok := saved[path]; ok {
			opts.Start = &p
		}
		sc.files = append(sc.files, logstate.NewLogFile(path, opts))
	}
	sc.stream = logstate.NewStream(sc.store, sc.files, *s.pollInterval)
	adminMode := len(s.admin.Servers) > 0
	// Under --collector.partition-series=unhealthy the log half's counters
	// are per topic: a counter moving between a partition's series and its
	// topic's as the partition's health changes would look newborn to the
	// alerts and count its old events again.
	logm := metrics.NewLogMetrics(sc.store, sc.stream, metrics.LogMetricsOptions{
		PartitionLabels: s.adminSeries() == metrics.AllPartitionSeries,
		LeaderGauges:    !adminMode,
	})
	sc.registry.MustRegister(versioncollector.NewCollector(programName))
	sc.direct = append(sc.direct, exposition.TableSource(logm.Tables))
	if adminMode {
		sc.admin = poller.New(s.admin, poller.Options{
			TopicFilter: filter,
			LogStore:    sc.logStore(),
			Logger:      logger.With("component", "admin"),
		})
		sc.direct = append(sc.direct, exposition.TableSource(metrics.NewAdminMetrics(sc.admin, s.adminSeries()).Tables))
	}
	if *s.probeFile != "" {
		var err error
		sc.probe, err = newProber(probeOptions{
			path:        *s.probeFile,
			base:        s.admin,
			series:      s.adminSeries(),
			filter:      filter,
			maxTargets:  *s.probeMaxTargets,
			idleTimeout: *s.probeIdleTimeout,
			maxRequests: *s.maxRequests,
			maxRenders:  *s.maxRenders,
			watchEvery:  s.probeWatchEvery,
		}, logger.With("component", "probe"))
		if err != nil {
			sc.close()
			return nil, fmt.Errorf("--probe.config-file: %w", err)
		}
		sc.hup = make(chan os.Signal, 1)
		sc.direct = append(sc.direct, metrics.ProbeTables(sc.probe.stats))
	}
	if !*s.noExporterMet {
		sc.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return sc, nil
}

// logStore is the log state the admin half joins with and tells what
// Metadata says (deleted topics and replicas moved away: their log-derived
// series disappear with them), nil when no log file is followed (admin-only
// mode: the store stays empty).
func (sc *sidecar) logStore() poller.LogStore {
	if len(sc.files) == 0 {
		return nil
	}
	return sc.store
}

// start runs the log stream, the admin poller and the position saver. The
// backlog is caught up by the stream in the background: HTTP answers from the
// start, and /-/ready tells when the files have been read to their end.
func (sc *sidecar) start(ctx context.Context, wg *sync.WaitGroup) {
	if len(sc.files) > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); sc.stream.Run(ctx) }()
	}
	if sc.admin != nil {
		wg.Add(1)
		go func() { defer wg.Done(); sc.admin.Run(ctx) }()
	}
	if sc.probe != nil {
		sc.probe.bind(ctx)
		wg.Add(1)
		go func() { defer wg.Done(); sc.probe.run(ctx, sc.hup) }()
	}
	if sc.positions != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(positionSaveInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_ = sc.savePositions() // a failure is counted and logged by the store
				}
			}
		}()
	}
}

// savePositions saves every file's position. A failure is counted and
// logged by the store (once per change of state); the error is for the
// final save, whose failure is the exit status.
func (sc *sidecar) savePositions() error {
	if sc.positions == nil {
		return nil
	}
	ps := make([]tail.Position, 0, len(sc.files))
	for _, f := range sc.files {
		if p, ok := f.Position(); ok && f.Path != "-" {
			ps = append(ps, p)
		}
	}
	if slices.Equal(ps, sc.saved) {
		return nil
	}
	if err := sc.positions.Save(ps); err != nil {
		return err
	}
	sc.saved = ps
	return nil
}

// close releases the position file's lock.
func (sc *sidecar) close() {
	if sc.positions != nil {
		sc.positions.Close()
	}
}

// ready means every log file is open and has been read to its end once (the
// backlog found at start is applied), and the admin half has tried once:
// before that, the metrics would show a partial picture.
func (sc *sidecar) ready() bool {
	if len(sc.files) > 0 && !sc.stream.CaughtUp() {
		return false
	}
	for _, f := range sc.files {
		if !f.Ready() {
			return false
		}
	}
	return sc.admin == nil || sc.admin.Ready()
}

func (sc *sidecar) handler(s *serveCommand) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(*s.metricsPath, exposition.NewMetricsHandler(sc.registry, sc.direct, sc.logger, *s.maxRequests, *s.maxRenders))
	if sc.probe != nil {
		mux.Handle("/probe", sc.probe)
	}
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "Healthy\n")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !sc.ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "Not ready: catching up the log files, waiting for them to appear, or for the first admin refresh\n")
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "Ready\n")
	})
	if *s.metricsPath != "/" {
		links := []web.LandingLinks{
			{Address: *s.metricsPath, Text: "Metrics"},
			{Address: "/-/healthy", Text: "Health"},
			{Address: "/-/ready", Text: "Readiness"},
		}
		if sc.probe != nil {
			links = append(links, web.LandingLinks{Address: "/probe?target=NAME", Text: "Probe a cluster of --probe.config-file"})
		}
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "Kafka Replication Exporter",
			Description: "Replication health of a Kafka broker, from its logs and the admin API",
			Version:     version.Info(),
			Links:       links,
		})
		if err == nil {
			mux.Handle("/", landing)
		}
	}
	return mux
}

// adminSeries is which partitions of the admin half have series of their own.
func (s *serveCommand) adminSeries() metrics.PartitionSeries {
	switch {
	case !*s.partitionLabels:
		return metrics.TopicSeries
	case *s.partitionSeries == "unhealthy":
		return metrics.UnhealthyPartitionSeries
	}
	return metrics.AllPartitionSeries
}
