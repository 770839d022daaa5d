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

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/tail"
)

// defaultListenAddress is outside the Kafka monitoring ports people already run
// beside a broker: kafka_exporter 9308, the JMX exporter's usual 7071/9404/5556,
// KMinion 8080, Burrow and Kafka Lag Exporter 8000.
const defaultListenAddress = ":9742"

// positionSaveInterval bounds how much is re-read (never lost) after a crash.
const positionSaveInterval = 5 * time.Second

type serveCommand struct {
	cmd           *kingpin.CmdClause
	web           *web.FlagConfig
	metricsPath   *string
	noExporterMet *bool
	maxRequests   *int

	logFiles      *[]string
	fromBeginning *bool
	positionFile  *string
	pollInterval  *time.Duration

	topicInclude    *string
	topicExclude    *string
	partitionLabels *bool

	admin *collector.AdminConfig
}

func newServeCommand(app *kingpin.Application) *serveCommand {
	cmd := app.Command("serve", "Run the sidecar: follow the broker's logs, poll the admin API, serve /metrics (the default command).").Default()
	s := &serveCommand{cmd: cmd}
	s.web = kingpinflag.AddFlags(cmd, defaultListenAddress)
	s.metricsPath = cmd.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String()
	s.noExporterMet = cmd.Flag("web.disable-exporter-metrics", "Exclude the exporter's own Go and process metrics.").Bool()
	s.maxRequests = cmd.Flag("web.max-requests", "Maximum number of parallel scrape requests (0 = no limit).").Default("40").Int()

	s.logFiles = cmd.Flag("log.file", "Broker log file to follow (repeatable): server.log, state-change.log, controller.log, a Kubernetes CRI log file, or - for stdin. None: admin-only mode.").Strings()
	s.fromBeginning = cmd.Flag("log.from-beginning", "Read the log files from the beginning instead of the end (when there is no saved position).").Bool()
	s.positionFile = cmd.Flag("log.position-file", "File in which to keep the read position of every log file, so a restart neither loses nor double-counts events (including files rotated while the exporter was down).").String()
	s.pollInterval = cmd.Flag("log.poll-interval", "How often the log files are checked for new lines, rotation and truncation.").Default("250ms").Duration()

	s.topicInclude = cmd.Flag("collector.topic-include", "Regular expression of topics to export partition series for.").Default(".*").String()
	s.topicExclude = cmd.Flag("collector.topic-exclude", "Regular expression of topics not to export.").Default("").String()
	s.partitionLabels = cmd.Flag("collector.partition-labels", "Export per-partition series; --no-collector.partition-labels rolls them up per topic (for very many partitions).").Default("true").Bool()

	s.admin = collector.AddAdminFlags(cmd)
	return s
}

// topicFilter compiles the include/exclude flags (anchored, as node_exporter does).
func (s *serveCommand) topicFilter() (func(string) bool, error) {
	inc, err := regexp.Compile("^(?:" + *s.topicInclude + ")$")
	if err != nil {
		return nil, fmt.Errorf("--collector.topic-include: %v", err)
	}
	var exc *regexp.Regexp
	if *s.topicExclude != "" {
		if exc, err = regexp.Compile("^(?:" + *s.topicExclude + ")$"); err != nil {
			return nil, fmt.Errorf("--collector.topic-exclude: %v", err)
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
	if len(*s.logFiles) == 0 && len(s.admin.Servers) == 0 {
		return nil, errors.New("nothing to do: give --log.file (the broker's logs) and/or --kafka.server (the admin API)")
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
	if err := s.admin.Validate(); err != nil {
		return nil, err
	}
	return filter, nil
}

func (s *serveCommand) run(logger *slog.Logger, loc *time.Location, stderr io.Writer) int {
	filter, err := s.validate()
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", programName, err)
		return exitUsage
	}
	logger.Info("Starting "+programName, "version", version.Info())
	logger.Info("Build context", "build_context", version.BuildContext())
	if os.Geteuid() == 0 {
		logger.Warn("Running as root: the sidecar only needs read access to the broker's log directory")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sidecar, err := newSidecar(s, filter, loc, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", programName, err)
		return exitUsage
	}
	var wg sync.WaitGroup
	sidecar.start(ctx, &wg)

	srv := &http.Server{Handler: sidecar.handler(s), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- web.ListenAndServe(srv, s.web, logger) }()
	select {
	case err := <-errc:
		stop()
		wg.Wait()
		logger.Error("Web server stopped", "err", err)
		return exitViolation
	case <-ctx.Done():
	}
	logger.Info("Shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shutdownCtx)
	wg.Wait()
	sidecar.savePositions()
	return exitOK
}

// sidecar holds the running parts of `serve`.
type sidecar struct {
	logger    *slog.Logger
	store     *logstate.Store
	files     []*logstate.LogFile
	admin     *collector.Admin
	positions *tail.PositionStore
	// registry holds the standard collectors (build info, Go, process) and
	// the admin half's small families; direct is the state the metrics
	// handler writes itself (every other kafka_replication_* family).
	registry *prometheus.Registry
	direct   []collector.TextSource
}

func newSidecar(s *serveCommand, filter func(string) bool, loc *time.Location, logger *slog.Logger) (*sidecar, error) {
	sc := &sidecar{logger: logger, store: logstate.NewStore(filter), registry: prometheus.NewRegistry()}
	var saved map[string]tail.Position
	if *s.positionFile != "" {
		sc.positions = tail.NewPositionStore(*s.positionFile)
		var err error
		if saved, err = sc.positions.Load(); err != nil {
			return nil, fmt.Errorf("--log.position-file: %v", err)
		}
	}
	for _, path := range *s.logFiles {
		opts := logstate.LogFileOptions{
			FromBeginning: *s.fromBeginning,
			PollInterval:  *s.pollInterval,
			Location:      loc,
			Logger:        logger.With("file", path),
		}
		if p, ok := saved[path]; ok {
			opts.Start = &p
		}
		sc.files = append(sc.files, logstate.NewLogFile(path, sc.store, opts))
	}
	adminMode := len(s.admin.Servers) > 0
	logm := collector.NewLogMetrics(sc.store, sc.files, collector.LogMetricsOptions{PartitionLabels: *s.partitionLabels, LeaderGauges: !adminMode})
	sc.registry.MustRegister(versioncollector.NewCollector(programName))
	sc.direct = append(sc.direct, collector.TableSource(logm.Tables))
	if adminMode {
		s.admin.TopicFilter = filter
		s.admin.PartitionLabels = *s.partitionLabels
		// Deleted topics: their log-derived series disappear with them.
		s.admin.OnTopics = func(exists map[string]struct{}) {
			sc.store.RetainTopics(func(topic string) bool { _, ok := exists[topic]; return ok })
		}
		sc.admin = collector.NewAdmin(s.admin, logger.With("component", "admin"), sc.store)
		sc.registry.MustRegister(sc.admin.SmallFamilies())
		sc.direct = append(sc.direct, sc.admin)
	}
	if !*s.noExporterMet {
		sc.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return sc, nil
}

func (sc *sidecar) start(ctx context.Context, wg *sync.WaitGroup) {
	logstate.CatchUp(sc.files)
	for _, f := range sc.files {
		if f.Path == "-" {
			// A read from stdin cannot be interrupted: shutdown does not wait for it.
			go f.Run(ctx)
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); f.Run(ctx) }()
	}
	if sc.admin != nil {
		wg.Add(1)
		go func() { defer wg.Done(); sc.admin.Run(ctx) }()
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
					sc.savePositions()
				}
			}
		}()
	}
}

func (sc *sidecar) savePositions() {
	if sc.positions == nil {
		return
	}
	ps := make([]tail.Position, 0, len(sc.files))
	for _, f := range sc.files {
		if f.Path != "-" {
			ps = append(ps, f.Position())
		}
	}
	if err := sc.positions.Save(ps); err != nil {
		sc.logger.Error("Saving log positions failed", "err", err)
	}
}

// ready means every log file is open and the admin half has tried once: before
// that, the metrics would show a partial picture.
func (sc *sidecar) ready() bool {
	for _, f := range sc.files {
		if !f.Ready() {
			return false
		}
	}
	return sc.admin == nil || sc.admin.Ready()
}

func (sc *sidecar) handler(s *serveCommand) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(*s.metricsPath, newMetricsHandler(sc.registry, sc.direct, sc.logger, *s.maxRequests))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "Healthy\n")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !sc.ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "Not ready: waiting for log files to appear or the first admin refresh\n")
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "Ready\n")
	})
	if *s.metricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "Kafka Replication Exporter",
			Description: "Replication health of a Kafka broker, from its logs and the admin API",
			Version:     version.Info(),
			Links: []web.LandingLinks{
				{Address: *s.metricsPath, Text: "Metrics"},
				{Address: "/-/healthy", Text: "Health"},
				{Address: "/-/ready", Text: "Readiness"},
			},
		})
		if err == nil {
			mux.Handle("/", landing)
		}
	}
	return mux
}
