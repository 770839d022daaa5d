package main

import (
	"context"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/metrics"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testcert"
)

// writeProbeConfig writes a --probe.config-file naming each target's
// bootstrap server, in name order.
func writeProbeConfig(t testing.TB, path string, targets map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("targets:\n")
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		b.WriteString("  " + name + ":\n    servers: [" + targets[name] + "]\n")
	}
	replaceFile(t, path, b.String())
}

// replaceFile puts content at path in one rename, as configuration managers
// do: the exporter's change check, every 20 ms, could otherwise read a file
// half written, and a test waiting for its verdict would take the half's.
func replaceFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".new"
	writeFile(t, tmp, []byte(content), 0o600)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// startProbeSidecar runs serve with --probe.config-file=cfg in-process, the
// file checked for changes every 20ms.
func startProbeSidecar(t testing.TB, cfg string, extra ...string) (*sidecar, *serveCommand, http.Handler) {
	t.Helper()
	c := newApp()
	s := c.serve
	s.probeWatchEvery = 20 * time.Millisecond
	if _, err := c.app.Parse(append([]string{"serve", "--probe.config-file=" + cfg, "--web.disable-exporter-metrics", "--kafka.refresh-interval=1h"}, extra...)); err != nil {
		t.Fatal(err)
	}
	filter, err := s.validate()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := newSidecar(s, filter, time.UTC, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	sc.start(ctx, &wg)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return sc, s, sc.handler(s)
}

// get answers one request of h: the status and the body.
func get(h http.Handler, target string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Code, rec.Body.String()
}

// probeWhenUp probes target until its poller has refreshed once.
func probeWhenUp(t testing.TB, h http.Handler, target string) string {
	t.Helper()
	var body string
	waitFor(t, "target "+target+" up", 20*time.Second, func() bool {
		var code int
		code, body = get(h, "/probe?target="+target)
		return code == http.StatusOK && strings.Contains(body, "\nkafka_replication_up 1\n")
	})
	return body
}

// dedicatedAdminSeries is what a dedicated --scope=cluster exporter on addr
// exports of the admin families: its admin half rendered alone, after its
// first refresh. Its whole /metrics must hold every line of it.
func dedicatedAdminSeries(t *testing.T, addr string) string {
	t.Helper()
	sc, s := startSidecar(t, "--kafka.server="+addr, "--scope=cluster", "--web.disable-exporter-metrics", "--kafka.refresh-interval=1h")
	waitFor(t, "the dedicated exporter's first refresh", 20*time.Second, sc.ready)
	h := exposition.NewMetricsHandler(prometheus.NewRegistry(),
		[]exposition.TableSource{metrics.NewAdminMetrics(sc.admin, s.adminSeries()).Tables}, slog.New(slog.DiscardHandler), 0, 1)
	_, admin := get(h, "/metrics")
	_, full := get(sc.handler(s), "/metrics")
	for line := range strings.Lines(admin) {
		if !strings.Contains(full, line) {
			t.Fatalf("the admin half's line %q is not in the dedicated exporter's /metrics", line)
		}
	}
	return admin
}

// timeless drops the values that depend on when a refresh ran.
func timeless(t *testing.T, body string) string {
	return filterExposition(t, strings.NewReader(body))
}

// Two fake clusters probed through one exporter: each target's body is the
// admin series of a dedicated --scope=cluster exporter of that cluster.
func TestProbeEqualsDedicatedExporter(t *testing.T) {
	a, b := fakeCluster(t), fakeCluster(t)
	cfg := filepath.Join(t.TempDir(), "probe.yml")
	writeProbeConfig(t, cfg, map[string]string{"alpha": a, "beta": b})
	_, _, h := startProbeSidecar(t, cfg)

	for name, addr := range map[string]string{"alpha": a, "beta": b} {
		got := timeless(t, probeWhenUp(t, h, name))
		if !strings.Contains(got, "kafka_replication_partition_replicas{") || strings.Contains(got, "kafka_replication_build_info") {
			t.Fatalf("target %s: want the partition series and no build info, got\n%s", name, got)
		}
		want := timeless(t, dedicatedAdminSeries(t, addr))
		if got != want {
			t.Errorf("target %s: the probe differs from a dedicated exporter's admin series:\n%s", name, lineDiff(want, got))
		}
	}
	_, m := get(h, "/metrics")
	for _, line := range []string{
		"kafka_replication_probe_targets_active 2\n",
		"kafka_replication_probe_config_targets 2\n",
		"kafka_replication_probe_config_last_reload_successful 1\n",
	} {
		if !strings.Contains(m, line) {
			t.Errorf("want %q in /metrics, got\n%s", line, m)
		}
	}
}

// A cold target answers at once, up 0, without waiting for Kafka; an
// unknown or missing target is refused with one line and dials nothing.
func TestProbeColdUnknownAndMissingTarget(t *testing.T) {
	hung := hungKafka(t)
	cfg := filepath.Join(t.TempDir(), "probe.yml")
	writeProbeConfig(t, cfg, map[string]string{"hung": hung})
	_, _, h := startProbeSidecar(t, cfg)

	start := time.Now()
	code, body := get(h, "/probe?target=hung")
	if took := time.Since(start); code != http.StatusOK || took > time.Second {
		t.Fatalf("want a prompt 200 for a cold target, got %d after %s: %s", code, took, body)
	}
	if !strings.Contains(body, "\nkafka_replication_up 0\n") {
		t.Errorf("want up 0 before the first refresh, got\n%s", body)
	}
	for target, want := range map[string]int{
		"/probe?target=127.0.0.1:9092": http.StatusNotFound,
		"/probe?target=nope":           http.StatusNotFound,
		"/probe":                       http.StatusBadRequest,
	} {
		code, body := get(h, target)
		if code != want || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: want %d and one line, got %d %q", target, want, code, body)
		}
	}
	_, m := get(h, "/metrics")
	if !strings.Contains(m, `kafka_replication_probe_requests_refused_total{reason="unknown_target"} 2`) {
		t.Errorf("want the unknown targets counted, got\n%s", m)
	}
}

// hungKafka accepts connections and never answers: a broker that hangs.
func hungKafka(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// A target whose brokers hang holds nothing another target's probe needs.
func TestProbeHungTargetDoesNotBlockAnother(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "probe.yml")
	writeProbeConfig(t, cfg, map[string]string{"hung": hungKafka(t), "good": fakeCluster(t)})
	_, _, h := startProbeSidecar(t, cfg, "--kafka.request-timeout=30s")
	get(h, "/probe?target=hung") // its poller now waits on the hung broker
	probeWhenUp(t, h, "good")
	for range 5 {
		for _, target := range []string{"hung", "good"} {
			start := time.Now()
			if code, body := get(h, "/probe?target="+target); code != http.StatusOK || time.Since(start) > time.Second {
				t.Fatalf("%s: want a prompt 200, got %d after %s: %s", target, code, time.Since(start), body)
			}
		}
	}
}

// Past --probe.max-targets a new target is refused with a clear line; one
// gone --probe.idle-timeout without a probe stops, its goroutines with it,
// and frees its place.
func TestProbeMaxTargetsAndIdleStop(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "probe.yml")
	writeProbeConfig(t, cfg, map[string]string{"alpha": fakeCluster(t), "beta": fakeCluster(t)})
	sc, _, h := startProbeSidecar(t, cfg, "--probe.max-targets=1", "--probe.idle-timeout=300ms")
	before := runtime.NumGoroutine()

	probeWhenUp(t, h, "alpha")
	code, body := get(h, "/probe?target=beta")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "--probe.max-targets") || strings.Count(body, "\n") != 1 {
		t.Errorf("want 503 naming --probe.max-targets past the cap, got %d %q", code, body)
	}
	_, m := get(h, "/metrics")
	if !strings.Contains(m, `kafka_replication_probe_requests_refused_total{reason="max_targets"} 1`) {
		t.Errorf("want the refusal counted, got\n%s", m)
	}

	waitFor(t, "alpha stopped after its idle timeout", 10*time.Second, func() bool { return sc.probe.stats().Active == 0 })
	waitFor(t, "the goroutines of alpha's poller gone", 10*time.Second, func() bool { return runtime.NumGoroutine() <= before })
	probeWhenUp(t, h, "beta")
}

// The file is loaded again when it changes and on SIGHUP; a bad file keeps
// the last good configuration and says so in a metric.
func TestProbeConfigReload(t *testing.T) {
	a, b := fakeCluster(t), fakeCluster(t)
	cfg := filepath.Join(t.TempDir(), "probe.yml")
	writeProbeConfig(t, cfg, map[string]string{"alpha": a})
	sc, _, h := startProbeSidecar(t, cfg, "--probe.idle-timeout=1h")
	probeWhenUp(t, h, "alpha")
	metric := func(line string) func() bool {
		return func() bool { _, m := get(h, "/metrics"); return strings.Contains(m, line) }
	}

	replaceFile(t, cfg, "targets:\n  alpha:\n    server: ["+a+"]\n") // a typo: server
	waitFor(t, "the bad file noticed", 10*time.Second, metric("kafka_replication_probe_config_last_reload_successful 0\n"))
	probeWhenUp(t, h, "alpha")
	if code, _ := get(h, "/probe?target=beta"); code != http.StatusNotFound {
		t.Errorf("want beta unknown while the file is bad, got %d", code)
	}

	writeProbeConfig(t, cfg, map[string]string{"beta": b})
	waitFor(t, "the changed file loaded", 10*time.Second, metric("kafka_replication_probe_config_last_reload_successful 1\n"))
	if code, _ := get(h, "/probe?target=alpha"); code != http.StatusNotFound {
		t.Errorf("want alpha gone with the file's change, got %d", code)
	}
	probeWhenUp(t, h, "beta")

	// SIGHUP reloads contents already seen: here the file is unchanged but
	// the CA file it names appears, which only SIGHUP can tell. Sent on the
	// channel serve hands to signal.Notify.
	ca := filepath.Join(filepath.Dir(cfg), "ca.pem")
	replaceFile(t, cfg, "targets:\n  beta:\n    servers: ["+b+"]\n  alpha:\n    servers: ["+a+"]\n    tls: {ca_file: "+ca+"}\n")
	waitFor(t, "the file naming a missing CA noticed", 10*time.Second, metric("kafka_replication_probe_config_last_reload_successful 0\n"))
	cert, _ := testcert.New(t).WriteFiles(t, filepath.Dir(cfg))
	if err := os.Rename(cert, ca); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // ten checks of the unchanged file
	if !metric("kafka_replication_probe_config_last_reload_successful 0\n")() {
		t.Fatal("an unchanged file was loaded again without SIGHUP")
	}
	sc.hup <- syscall.SIGHUP
	waitFor(t, "the file loaded on SIGHUP", 10*time.Second, metric("kafka_replication_probe_config_last_reload_successful 1\n"))
	if !metric("kafka_replication_probe_config_targets 2\n")() {
		t.Error("want both targets after the SIGHUP reload")
	}
	if code, _ := get(h, "/probe?target=alpha"); code != http.StatusOK {
		t.Errorf("want alpha served after the SIGHUP reload, got %d", code)
	}
}

// A bad --probe.config-file stops the exporter at start: exit 2, one line.
func TestBadProbeConfigExitsTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		writeFile(t, path, []byte(content), 0o600)
		return path
	}
	for name, tc := range map[string]struct{ file, want string }{
		"missing":       {filepath.Join(dir, "absent.yml"), "no such file"},
		"not YAML":      {write("garbage.yml", "targets: [\n"), "yaml"},
		"empty":         {write("empty.yml", ""), "no targets"},
		"unknown field": {write("typo.yml", "targets:\n  a:\n    server: [x:1]\n"), "server"},
		"no servers":    {write("noservers.yml", "targets:\n  a: {}\n"), "servers"},
		"bad name":      {write("name.yml", "targets:\n  \"a b\":\n    servers: [x:1]\n"), "want a name"},
		"no port":       {write("port.yml", "targets:\n  a:\n    servers: [x]\n"), "host:port"},
		"ca missing":    {write("ca.yml", "targets:\n  a:\n    servers: [x:1]\n    tls: {ca_file: "+filepath.Join(dir, "no.pem")+"}\n"), "no.pem"},
		"no password":   {write("pw.yml", "targets:\n  a:\n    servers: [x:1]\n    sasl: {mechanism: scram-sha-512, username: u}\n"), "password_file"},
		"mechanism":     {write("mech.yml", "targets:\n  a:\n    servers: [x:1]\n    sasl: {mechanism: gssapi}\n"), "gssapi"},
	} {
		code, _, errOut := runCLI(t, "", "serve", "--web.listen-address=127.0.0.1:0", "--probe.config-file="+tc.file)
		if code != exitUsage {
			t.Errorf("%s: want exit 2, got %d (stderr %q)", name, code, errOut)
		}
		var errLines []string
		for line := range strings.Lines(errOut) {
			if strings.Contains(line, "error:") {
				errLines = append(errLines, line)
			}
		}
		if len(errLines) != 1 || !strings.Contains(errLines[0], "--probe.config-file") || !strings.Contains(errLines[0], tc.want) {
			t.Errorf("%s: want one line naming --probe.config-file and %q, got %q", name, tc.want, errOut)
		}
	}
}

// /probe is behind the same --web.config.file as /metrics: exporter-toolkit
// wraps the whole mux.
func TestProbeBehindWebConfig(t *testing.T) {
	dir := t.TempDir()
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	webCfg := filepath.Join(dir, "web.yml")
	writeFile(t, webCfg, []byte("basic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600)
	cfg := filepath.Join(dir, "probe.yml")
	writeProbeConfig(t, cfg, map[string]string{"alpha": fakeCluster(t)})
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	sc, s, _ := startProbeSidecar(t, cfg, "--web.listen-address="+addr, "--web.config.file="+webCfg)
	serveHTTP(t, sc, s, addr)

	probe := func(user, pass string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/probe?target=alpha", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := probe("", ""); got != http.StatusUnauthorized {
		t.Errorf("want 401 without credentials, got %d", got)
	}
	if got := probe("prom", "s3cret"); got != http.StatusOK {
		t.Errorf("want 200 with credentials, got %d", got)
	}
	if n := sc.probe.stats().Active; n != 1 {
		t.Errorf("want only the authorized probe to start the target, got %d active", n)
	}
}

// The ConfigMap of deploy/kubernetes/managed-kafka-probe.yaml loads, its
// secret files put in a temporary directory.
func TestProbeDeployExampleLoads(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/kubernetes/managed-kafka-probe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(raw), "\n---\n") // the ConfigMap comes first
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal([]byte(doc), &cm); err != nil || cm.Data["probe.yml"] == "" {
		t.Fatalf("no probe.yml in the first document: %v", err)
	}
	dir := t.TempDir()
	cert, _ := testcert.New(t).WriteFiles(t, dir)
	ca, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"msk-eu-password": []byte("x\n"), "confluent-secret": []byte("x\n"), "aiven-ca.pem": ca, "aiven-password": []byte("x\n")} {
		writeFile(t, filepath.Join(dir, name), content, 0o600)
	}
	probeYML := strings.ReplaceAll(cm.Data["probe.yml"], "/etc/kafka-replication-exporter/", dir+"/")
	c := newApp()
	if _, err := c.app.Parse([]string{"serve"}); err != nil {
		t.Fatal(err)
	}
	pc, err := parseProbeConfig("probe.yml", []byte(probeYML), c.serve.admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.targets) != 3 || pc.targets["confluent-prod"].cfg.RefreshInterval != time.Minute || len(pc.targets["confluent-prod"].cfg.OAuth.Extensions) != 2 {
		t.Errorf("want the three clusters, confluent-prod refreshed every minute with two extensions, got %+v", pc.targets)
	}
}
