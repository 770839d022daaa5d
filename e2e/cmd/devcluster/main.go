// Command devcluster is `make run`: a local Kafka cluster with the whole
// monitoring stack beside it, to look at the exporter by hand.
//
// It starts Kafka as production lays it out (one controller-only node and
// three brokers, fetched from Maven Central on first use, see e2e/harness)
// with kafka.cluster.Partition at DEBUG so the high-watermark series flow,
// creates two topics with a trickle of traffic (acks=all on "demo", acks=1 on
// "demo-acks1", whose high watermark stalls when two brokers stop: KAFKA-15583),
// runs one kafka_replication_exporter per broker, and, when the pinned tools
// are installed (or can be, by .ci/install-prometheus-tools.sh), Prometheus
// with the shipped alert rules and an Alertmanager whose notifications are
// printed here. The banner prints each node's PID and how to stop one.
//
// The URLs stay the same from run to run: the sidecars listen on 9742 (the
// exporter's default) and up, Prometheus on 9090, Alertmanager on 9093; a port
// that is taken is replaced by a free one, and the banner says so. The
// controller moves leadership back to the preferred replicas a few seconds
// after a frozen or stopped broker is back (auto leader rebalancing, checked
// every 10 s), so the demo heals as a production cluster does, only sooner.
//
// Ctrl-C (or SIGTERM) stops everything and exits 0 (make run, which gets the
// Ctrl-C too, then reports the interrupt: exit status 130); a second Ctrl-C
// quits at once.
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
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

const (
	demoTopic = "demo"
	// acks1Topic lives on brokers 1, 2, 3 with broker 1 as leader, so the
	// banner can name the two followers to stop.
	acks1Topic = "demo-acks1"

	// The ports a user can bookmark: the sidecar of broker N listens on
	// exporterPort+N-1.
	exporterPort     = 9742
	prometheusPort   = 9090
	alertmanagerPort = 9093

	// rebalanceCheck is how often the controller looks for partitions led by
	// a replica other than the preferred one (Kafka's default: 300 s).
	rebalanceCheck = 10 * time.Second
)

func main() {
	version := flag.String("kafka.version", harness.Versions[0], "Kafka version to run")
	dir := flag.String("dir", "", "working directory (default: a new temporary directory)")
	keep := flag.Bool("keep", false, "keep the working directory (logs, data) on exit")
	bin := flag.String("exporter", "bin/kafka_replication_exporter", "exporter binary; built into the working directory if missing")
	flag.Parse()
	log.SetFlags(log.Ltime)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal a second one takes the default action, so a
		// stuck shutdown can still be interrupted.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, *version, *dir, *keep, *bin)
	if ctx.Err() != nil {
		// Asked to stop: whatever was interrupted on the way is no failure.
		log.Print("stopped")
		return
	}
	if err != nil {
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
		// The harness turns leader rebalancing off so that the scenarios'
		// leaders stay put; here it is on, so that after a frozen or stopped
		// broker is back the leaders (and with them the leader-scope series)
		// return to where they were. In KRaft the controller runs it.
		ControllerConfig: map[string]string{
			"auto.leader.rebalance.enable":            "true",
			"leader.imbalance.check.interval.seconds": fmt.Sprint(int(rebalanceCheck.Seconds())),
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		log.Print("stopping Kafka")
		c.Close()
	}()
	if err := c.CreateTopic(ctx, harness.Topic{
		Name: demoTopic, Partitions: 3, RF: 3,
		Configs: map[string]string{"min.insync.replicas": "2"},
	}); err != nil {
		return err
	}
	if err := c.CreateTopic(ctx, harness.Topic{
		Name: acks1Topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}); err != nil {
		return err
	}

	if bin, err = exporterBinary(ctx, root, bin, dir); err != nil {
		return err
	}
	var notes []string
	es, err := startExporters(ctx, c, bin, &notes)
	if err != nil {
		return err
	}
	defer es.Close()

	promURL, amURL, closeMonitoring := startMonitoring(ctx, root, dir, es, &notes)
	defer closeMonitoring()

	go trickle(ctx, c, demoTopic, 3, sarama.WaitForAll)
	go trickle(ctx, c, acks1Topic, 1, sarama.WaitForLocal)

	printBanner(c, es, promURL, amURL, notes)
	<-ctx.Done()
	log.Print("stopping: exporters, Prometheus, Alertmanager, then Kafka")
	return nil
}

// pickAddr returns 127.0.0.1:port if the port is free, else a free loopback
// port and a note for the banner naming what moved.
func pickAddr(port int, what string, notes *[]string) (string, error) {
	want := fmt.Sprintf("127.0.0.1:%d", port)
	l, err := net.Listen("tcp", want)
	if err == nil {
		l.Close()
		return want, nil
	}
	// A port below the ephemeral range: no outgoing connection takes it
	// before the process binds it.
	got, err := harness.ListenAddr()
	if err != nil {
		return "", err
	}
	*notes = append(*notes, fmt.Sprintf("port %d is taken: %s listens on %s instead", port, what, got))
	return got, nil
}

// startExporters starts the sidecars of brokers 1, 2, 3 on exporterPort and
// up, at once, and waits until all are ready.
func startExporters(ctx context.Context, c *harness.Cluster, bin string, notes *[]string) (stack.Exporters, error) {
	nodes := c.Nodes()
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		var err error
		if addrs[i], err = pickAddr(exporterPort+int(n.ID)-1, fmt.Sprintf("the sidecar of broker %d", n.ID), notes); err != nil {
			return nil, err
		}
	}
	es := make(stack.Exporters, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			es[i], errs[i] = stack.StartExporter(ctx, n, bin, "--web.listen-address="+addrs[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, e := range es {
			if e != nil {
				e.Close()
			}
		}
		return nil, err
	}
	return es, nil
}

// printBanner tells what runs where and, with the real PIDs, how to break it.
func printBanner(c *harness.Cluster, es stack.Exporters, promURL, amURL string, notes []string) {
	fmt.Println()
	fmt.Printf("Kafka %s, bootstrap %s\n", c.Version(), strings.Join(c.Bootstrap(), ","))
	fmt.Printf("  %-5s %-10s %-8s %-16s %s\n", "node", "role", "pid", "listener", "exporter")
	for _, n := range append(c.Controllers(), c.Nodes()...) {
		addr, exporter := n.BrokerAddr, "-"
		if n.Role == harness.RoleController {
			addr = n.ControllerAddr
		}
		if e := es.Node(n.ID); e != nil {
			exporter = e.URL
		}
		fmt.Printf("  %-5d %-10s %-8d %-16s %s\n", n.ID, n.Role, n.PID(), addr, exporter)
	}
	fmt.Printf("  logs: %s/node-<id>/logs\n", c.Dir())
	if promURL != "" {
		fmt.Printf("Prometheus:   %s/alerts  (rules: alerts/kafka-replication.rules.yml, unscaled)\n", promURL)
		fmt.Printf("Alertmanager: %s  (notifications are printed here)\n", amURL)
	}
	for _, n := range notes {
		fmt.Printf("Note: %s\n", n)
	}
	fmt.Println()
	fmt.Printf("topic %-11s 3 partitions, RF 3, min ISR 2, acks=all, one message a second\n", demoTopic)
	fmt.Printf("topic %-11s 1 partition on brokers 1,2,3 (leader 1), min ISR 2, acks=1, one message a second\n", acks1Topic)
	fmt.Println()
	b1, b2, b3 := c.Node(1).PID(), c.Node(2).PID(), c.Node(3).PID()
	fmt.Println("Try:")
	fmt.Printf("  freeze broker 3 (a long GC pause):  kill -STOP %d     resume: kill -CONT %d\n", b3, b3)
	fmt.Printf("  stop broker 3 (controlled):         kill %d          it stays down until the next make run\n", b3)
	fmt.Printf("  crash broker 1 (%s leader):  kill -9 %d\n", acks1Topic, b1)
	fmt.Printf("  the KAFKA-15583 stall:              kill -STOP %d %d\n", b2, b3)
	fmt.Printf("      %s keeps taking acks=1 writes while its high watermark stays put:\n", acks1Topic)
	fmt.Println("      kafka_replication_partition_high_watermark_stalled goes to 1 after --stall.threshold (20s here)")
	fmt.Printf("      and acks=all sends to %s fail with NOT_ENOUGH_REPLICAS; kill -CONT %d %d ends it\n", demoTopic, b2, b3)
	fmt.Println("  A stopped broker's own sidecar reports its admin API unreachable (kafka_replication_up 0).")
	fmt.Printf("  After kill -CONT the broker rejoins the ISR within seconds and the controller hands its\n")
	fmt.Printf("  partitions back to it within %s (leader rebalancing; Kafka's default interval is 5 minutes),\n", rebalanceCheck)
	fmt.Println("  so every sidecar exports its partitions again.")
	fmt.Printf("  Leave the controller (node %d) running: the demo has a one-node quorum.\n", c.Controllers()[0].ID)
	fmt.Println("Ctrl-C stops everything (make run then reports the interrupt: exit status 130).")
	fmt.Println()
}

// startMonitoring starts Alertmanager and Prometheus with the shipped rules
// if the pinned tools are (or can be) installed; without them the cluster
// and exporters still run.
func startMonitoring(ctx context.Context, root, dir string, es stack.Exporters, notes *[]string) (promURL, amURL string, closeAll func()) {
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
	var am *stack.Alertmanager
	amAddr, err := pickAddr(alertmanagerPort, "Alertmanager", notes)
	if err == nil {
		am, err = stack.StartAlertmanagerOn(ctx, amAddr, dir, receiver)
	}
	if err != nil {
		log.Printf("Alertmanager: %v: continuing without it", err)
	} else {
		amURL = am.URL
	}
	rules := filepath.Join(root, "alerts", "kafka-replication.rules.yml")
	var prom *stack.Prometheus
	promAddr, err := pickAddr(prometheusPort, "Prometheus", notes)
	if err == nil {
		prom, err = stack.StartPrometheusOn(ctx, promAddr, dir, es.Targets(), []string{rules}, amURL, 5*time.Second)
	}
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
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook.ServeHTTP(w, r)
		if notes, _ := hook.Notifications(); len(notes) > 0 {
			log.Printf("alert notification: %s", notes[len(notes)-1])
		}
	})
	go func() { log.Printf("webhook receiver stopped: %v", http.Serve(l, handler)) }()
	return "http://" + l.Addr().String() + "/", nil
}

// trickle produces one message a second with the given acks, round-robin
// over the topic's partitions, so the high watermarks move. It keeps one
// producer, which learns where the leaders are once instead of at every send,
// and opens a new one after a failed send, as leaders may have moved.
func trickle(ctx context.Context, c *harness.Cluster, topic string, partitions int32, acks sarama.RequiredAcks) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var producer sarama.SyncProducer
	defer func() {
		if producer != nil {
			producer.Close()
		}
	}()
	var lastErr time.Time
	for i := int32(0); ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var err error
		if producer == nil {
			producer, err = c.Producer(acks)
		}
		if err == nil {
			_, _, err = producer.SendMessage(&sarama.ProducerMessage{
				Topic: topic, Partition: i % partitions,
				Value: sarama.StringEncoder(fmt.Sprintf("demo message %d", i)),
			})
			if err != nil {
				producer.Close()
				producer = nil
			}
		}
		// One line a minute at most: a stopped broker makes every send fail.
		if err != nil && ctx.Err() == nil && time.Since(lastErr) > time.Minute {
			log.Printf("%s traffic: %v", topic, err)
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
