// Command devcluster is `make run`: a local Kafka cluster with the whole
// monitoring stack beside it, to look at the exporter by hand.
//
// It starts three Kafka 4.1.1 KRaft nodes (fetched from Maven Central on
// first use, see e2e/harness) with kafka.cluster.Partition at DEBUG so the
// high-watermark series flow, creates a demo topic with a trickle of traffic,
// runs one kafka_replication_exporter per node, and, when the pinned tools
// are installed (or can be, by .ci/install-prometheus-tools.sh), Prometheus
// with the shipped alert rules and an Alertmanager whose notifications are
// printed here. Ctrl-C stops everything.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

const demoTopic = "demo"

func main() {
	version := flag.String("kafka.version", "4.1.1", "Kafka version to run")
	dir := flag.String("dir", "", "working directory (default: a new temporary directory)")
	keep := flag.Bool("keep", false, "keep the working directory (logs, data) on exit")
	bin := flag.String("exporter", "bin/kafka_replication_exporter", "exporter binary; built into the working directory if missing")
	flag.Parse()
	log.SetFlags(log.Ltime)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *version, *dir, *keep, *bin); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

func run(ctx context.Context, version, dir string, keep bool, bin string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kre-devcluster-*"); err != nil {
			return err
		}
	}
	if keep {
		defer log.Printf("files kept in %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	log.Printf("starting Kafka %s in %s (first run downloads it from Maven Central)", version, dir)
	c, err := harness.Start(ctx, harness.Options{
		Version: version, Dir: filepath.Join(dir, "kafka"), Logf: log.Printf,
		// HW updates are DEBUG lines; without them the log-derived HW series
		// stay empty. Set in the logging config, so it survives restarts.
		LogLevels: map[string]string{"kafka.cluster.Partition": "DEBUG"},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CreateTopic(ctx, harness.Topic{Name: demoTopic, Partitions: 3, RF: 3,
		Configs: map[string]string{"min.insync.replicas": "2"}}); err != nil {
		return err
	}

	if bin, err = exporterBinary(ctx, root, bin, dir); err != nil {
		return err
	}
	es, err := stack.StartExporters(ctx, c, bin)
	if err != nil {
		return err
	}
	defer es.Close()

	promURL, amURL, closeMonitoring := startMonitoring(ctx, root, dir, es)
	defer closeMonitoring()

	go trickle(ctx, c)

	fmt.Println()
	fmt.Printf("Kafka bootstrap:  %s\n", strings.Join(c.Bootstrap(), ","))
	for _, e := range es {
		n := c.Node(e.NodeID)
		fmt.Printf("node %d:           broker %s, logs %s, exporter %s\n", n.ID, n.BrokerAddr, n.LogDir, e.URL)
	}
	if promURL != "" {
		fmt.Printf("Prometheus:       %s/alerts  (rules: alerts/kafka-replication.rules.yml, unscaled)\n", promURL)
		fmt.Printf("Alertmanager:     %s  (notifications are printed here)\n", amURL)
	}
	fmt.Printf("demo topic %q: 3 partitions, RF 3, min ISR 2, one message a second\n", demoTopic)
	fmt.Println("Try: kill -STOP a broker pid (see above) and watch the ISR series. Ctrl-C stops everything.")
	fmt.Println()

	<-ctx.Done()
	log.Print("stopping")
	return nil
}

// startMonitoring starts Alertmanager and Prometheus with the shipped rules
// if the pinned tools are (or can be) installed; without them the cluster
// and exporters still run.
func startMonitoring(ctx context.Context, root, dir string, es stack.Exporters) (promURL, amURL string, closeAll func()) {
	closeAll = func() {}
	if _, err := stack.Tool("prometheus"); err != nil {
		log.Printf("Prometheus tools not installed; running .ci/install-prometheus-tools.sh (minutes on a cold cache)")
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, ".ci", "install-prometheus-tools.sh"))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			log.Printf("install failed (%v): continuing without Prometheus and Alertmanager", err)
			return "", "", closeAll
		}
	}
	receiver, err := serveReceiver()
	if err != nil {
		log.Printf("webhook receiver: %v: continuing without Prometheus and Alertmanager", err)
		return "", "", closeAll
	}
	am, err := stack.StartAlertmanager(ctx, dir, receiver)
	if err != nil {
		log.Printf("Alertmanager: %v: continuing without it", err)
	}
	if am != nil {
		amURL = am.URL
	}
	rules := filepath.Join(root, "alerts", "kafka-replication.rules.yml")
	prom, err := stack.StartPrometheus(ctx, dir, es.Targets(), []string{rules}, amURL, 5*time.Second)
	if err != nil {
		log.Printf("Prometheus: %v: continuing without it", err)
		if am != nil {
			am.Close()
		}
		return "", "", closeAll
	}
	return prom.URL, amURL, func() {
		prom.Close()
		if am != nil {
			am.Close()
		}
	}
}

// serveReceiver serves a webhook receiver that prints each notification and
// returns its URL.
func serveReceiver() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	hook := stack.NewWebhook()
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook.ServeHTTP(w, r)
		if notes, _ := hook.Notifications(); len(notes) > 0 {
			log.Printf("alert notification: %s", notes[len(notes)-1])
		}
	}))
	return "http://" + l.Addr().String() + "/", nil
}

// trickle produces one acks=all message a second, round-robin over the demo
// partitions, so the high watermarks move.
func trickle(ctx context.Context, c *harness.Cluster) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var lastErr time.Time
	for i := int32(0); ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		res, err := c.Produce(ctx, demoTopic, i%3, 1, sarama.WaitForAll)
		if err == nil && len(res.Errors) > 0 {
			err = res.Errors[0]
		}
		// One line a minute at most: a stopped broker makes every send fail.
		if err != nil && ctx.Err() == nil && time.Since(lastErr) > time.Minute {
			log.Printf("demo traffic: %v", err)
			lastErr = time.Now()
		}
	}
}

// exporterBinary returns bin (relative to the repository root) if it exists,
// else builds the exporter into dir.
func exporterBinary(ctx context.Context, root, bin, dir string) (string, error) {
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(root, bin)
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	out := filepath.Join(dir, "kafka_replication_exporter")
	log.Printf("%s missing: building %s", bin, out)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/kafka_replication_exporter")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return out, cmd.Run()
}

// repoRoot finds the module root from the working directory.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "alerts")); err == nil {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("run from inside the kafka_replication_exporter repository")
		}
		d = parent
	}
}
