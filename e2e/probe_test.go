package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// TestProbe: /probe?target=NAME of a real cluster (4.4.0) through a
// multi-target exporter equals the admin series of a dedicated
// --scope=cluster exporter of the same cluster, and an unknown target is
// refused.
//
// How: one cluster, a topic of 3 partitions RF 3 with 10 records in each; a
// dedicated exporter (--kafka.server, --scope=cluster, no log files) and a
// multi-target one (--probe.config-file naming the cluster, nothing else),
// both refreshing every 2 s. The bodies are compared line by line, every
// series present in both, with the values that depend on when a refresh ran
// normalised away: every *_seconds family (timestamps, durations, the
// quorum's lags and fetch ages in time) and the metadata quorum's offsets
// (high watermark, log end offsets, lags in records), which the active
// controller's NoOpRecords move twice a second.
//
// What it saw (first run, alone on the machine): the bodies agreed on 149
// lines (up 1, the 3 partitions of probed and the internal topics, the
// quorum) at the first comparison after both were ready; wall time 20 s with
// the cluster start.
func TestProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	start := time.Now()
	defer func() { t.Logf("TestProbe wall time %v", time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent})
	must(t, c.CreateTopic(ctx, harness.Topic{Name: "probed", Partitions: 3, Configs: map[string]string{"min.insync.replicas": "2"}}))
	for p := range int32(3) {
		_, err := c.Produce(ctx, "probed", p, 10, sarama.WaitForAll)
		must(t, err)
	}
	servers := strings.Join(c.Bootstrap(), ",")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "probe.yml")
	must(t, os.WriteFile(cfg, []byte("targets:\n  real:\n    servers: ["+servers+"]\n"), 0o600))

	common := []string{"--kafka.refresh-interval=2s", "--web.disable-exporter-metrics"}
	var dedicatedArgs []string
	for _, s := range c.Bootstrap() {
		dedicatedArgs = append(dedicatedArgs, "--kafka.server="+s)
	}
	dedicated := startPlainExporter(ctx, t, dir, "dedicated", append(append(dedicatedArgs, "--scope=cluster"), common...)...)
	multi := startPlainExporter(ctx, t, dir, "multi", append([]string{"--probe.config-file=" + cfg}, common...)...)

	if code, body := httpGet(ctx, t, multi+"/probe?target=elsewhere:9092"); code != http.StatusNotFound {
		t.Errorf("want 404 for a target not in the file, got %d %q", code, body)
	}
	var want, got string
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, d := httpGet(ctx, t, dedicated+"/metrics")
		_, p := httpGet(ctx, t, multi+"/probe?target=real")
		want, got = adminOnly(normaliseProbe(d)), normaliseProbe(p)
		if want == got && strings.Contains(got, "\nkafka_replication_up 1\n") && strings.Contains(got, `topic="probed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the probe still differs from the dedicated exporter's admin series (- dedicated, + probe):\n%s", diffLines(want, got))
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("probe and dedicated exporter agree on %d lines, %s after the test began", strings.Count(got, "\n"), time.Since(start).Round(time.Second))
}

// startPlainExporter runs the exporter binary with args and no log file,
// and returns its base URL once it answers /-/ready.
func startPlainExporter(ctx context.Context, t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	addrFile := filepath.Join(dir, name+".addr")
	logFile, err := os.Create(filepath.Join(dir, name+".log"))
	must(t, err)
	cmd := exec.Command(exporterBinary(t), append([]string{"serve", "--web.listen-address=127.0.0.1:0", "--web.listen-address-file=" + addrFile}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("%s exporter's log:\n%s", name, b)
		}
	})
	var url string
	must(t, waitFor(ctx, 20*time.Second, func() bool {
		if url == "" {
			b, err := os.ReadFile(addrFile)
			if err != nil || !strings.HasSuffix(string(b), "\n") {
				return false
			}
			url = "http://" + strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
		}
		code, _ := httpGet(ctx, t, url+"/-/ready")
		return code == http.StatusOK
	}))
	return url
}

func httpGet(ctx context.Context, t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	must(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// normaliseProbe blanks the values that depend on when a refresh ran.
func normaliseProbe(body string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			name := line
			if i := strings.IndexAny(line, "{ "); i > 0 {
				name = line[:i]
			}
			if timed(name) {
				line = line[:strings.LastIndexByte(line, ' ')] + " _"
			}
		}
		fmt.Fprintln(&b, line)
	}
	return b.String()
}

func timed(name string) bool {
	switch name {
	case "kafka_replication_metadata_quorum_high_watermark", "kafka_replication_metadata_quorum_replica_log_end_offset",
		"kafka_replication_metadata_quorum_replica_lag_records":
		return true
	}
	return strings.HasSuffix(name, "_seconds")
}

// adminOnly drops the families of a dedicated exporter's /metrics that are
// not the admin half's: the build info and the log half's (no log file is
// followed, but their families are written).
func adminOnly(body string) string {
	var b strings.Builder
	skip := false
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "# HELP ") {
			name := strings.Fields(line)[2]
			skip = strings.HasSuffix(name, "_build_info") || strings.HasPrefix(name, "kafka_replication_log_")
		}
		if !skip {
			b.WriteString(line)
		}
	}
	return b.String()
}

// diffLines lists the lines only in want (-) or only in got (+).
func diffLines(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for l := range strings.Lines(s) {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for l := range strings.Lines(want) {
		if !g[l] {
			b.WriteString("- " + l)
		}
	}
	for l := range strings.Lines(got) {
		if !w[l] {
			b.WriteString("+ " + l)
		}
	}
	return b.String()
}
