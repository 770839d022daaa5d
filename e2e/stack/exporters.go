package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// Exporter is one sidecar, running beside one Kafka node.
type Exporter struct {
	NodeID int32
	Addr   string // host:port of its HTTP server
	URL    string // its /metrics URL
	proc   *process
}

// Close stops the exporter.
func (e *Exporter) Close() { e.proc.stop() }

// Kill stops the exporter with SIGKILL, as a crash or an OOM kill would: no
// position is saved on the way out.
func (e *Exporter) Kill() { e.proc.kill() }

// Exporters are the sidecars of a cluster, ordered by node id.
type Exporters []*Exporter

// Close stops every exporter, all at once: each gets 10s before SIGKILL, and
// one whose broker is frozen may need them all.
func (es Exporters) Close() {
	var wg sync.WaitGroup
	for _, e := range es {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Close()
		}()
	}
	wg.Wait()
}

// URLs lists the /metrics URLs, ordered by node id.
func (es Exporters) URLs() []string {
	var urls []string
	for _, e := range es {
		urls = append(urls, e.URL)
	}
	return urls
}

// Node returns the exporter of a node, or nil.
func (es Exporters) Node(id int32) *Exporter {
	for _, e := range es {
		if e.NodeID == id {
			return e
		}
	}
	return nil
}

// Targets are the exporters as Prometheus scrape targets.
func (es Exporters) Targets() []Target {
	var ts []Target
	for _, e := range es {
		ts = append(ts, Target{Addr: e.Addr, Instance: fmt.Sprintf("kafka-%d", e.NodeID)})
	}
	return ts
}

// StartExporters starts one sidecar per node of c, as it would run in
// production: following the node's three log files and polling the admin
// API of its own broker only. extraArgs are added to every command line; an
// extra --flag=value replaces the default of the same flag here. It waits until every exporter is
// ready (/-/ready: log files open, first admin refresh done). Its output goes
// to exporter.log in the node's directory. On error nothing is left running.
func StartExporters(ctx context.Context, c *harness.Cluster, binPath string, extraArgs ...string) (Exporters, error) {
	return StartExportersLogged(ctx, c, binPath, "exporter.log", extraArgs...)
}

// StartExportersLogged is StartExporters with the output in logName, for a
// scenario that runs a second set of sidecars beside the first.
func StartExportersLogged(ctx context.Context, c *harness.Cluster, binPath, logName string, extraArgs ...string) (Exporters, error) {
	return startExporters(ctx, c.Nodes(), binPath, logName, brokerArgs, extraArgs)
}

// StartControllerExporters starts the log-only sidecar of every dedicated
// controller of c, as docs/scope.md runs it: following the controller's
// server.log (the Raft client's lines) and controller.log, with no
// --kafka.server (a controller serves no admin API to clients) and no
// --kafka.broker-id (the id is the one its lines name). extraArgs and the
// wait are StartExporters'; the output goes to exporter.log in the
// controller's directory.
func StartControllerExporters(ctx context.Context, c *harness.Cluster, binPath string, extraArgs ...string) (Exporters, error) {
	return startExporters(ctx, c.Controllers(), binPath, "exporter.log", controllerArgs, extraArgs)
}

// startExporters launches a sidecar per node, then waits until every one is
// ready; on error nothing is left running.
func startExporters(ctx context.Context, nodes []*harness.Node, binPath, logName string, nodeArgs func(*harness.Node) []string,
	extraArgs []string,
) (Exporters, error) {
	var es Exporters
	for _, n := range nodes {
		e, err := launchExporter(ctx, n, binPath, logName, withOverrides(nodeArgs(n), extraArgs))
		if err != nil {
			es.Close()
			return nil, err
		}
		es = append(es, e)
	}
	for _, e := range es {
		if err := e.proc.waitReady(ctx, "http://"+e.Addr+"/-/ready"); err != nil {
			es.Close()
			return nil, err
		}
	}
	return es, nil
}

// StartExporter starts the sidecar of one node, as StartExporters does for
// each, and waits until it is ready. A scenario that stops and restarts a
// sidecar (say, to test --log.position-file) calls it again after Close; the
// restarted sidecar has a new address, which a Prometheus scraping it learns
// from Prometheus.SetTargets.
func StartExporter(ctx context.Context, n *harness.Node, binPath string, extraArgs ...string) (*Exporter, error) {
	e, err := launchExporter(ctx, n, binPath, "exporter.log", withOverrides(brokerArgs(n), extraArgs))
	if err != nil {
		return nil, err
	}
	if err := e.proc.waitReady(ctx, "http://"+e.Addr+"/-/ready"); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// brokerArgs are the flags of a broker's sidecar: its three log files and
// the admin API of its own broker.
func brokerArgs(n *harness.Node) []string {
	return []string{
		"--log.file=" + filepath.Join(n.LogDir, "server.log"),
		"--log.file=" + filepath.Join(n.LogDir, "state-change.log"),
		"--log.file=" + filepath.Join(n.LogDir, "controller.log"),
		"--kafka.server=" + n.BrokerAddr,
		fmt.Sprintf("--kafka.broker-id=%d", n.ID),
		"--kafka.refresh-interval=2s",
		"--stall.threshold=20s",
		"--log.poll-interval=250ms",
	}
}

// controllerArgs are the flags of a dedicated controller's log-only sidecar.
func controllerArgs(n *harness.Node) []string {
	return []string{
		"--log.file=" + filepath.Join(n.LogDir, "server.log"),
		"--log.file=" + filepath.Join(n.LogDir, "controller.log"),
		"--log.poll-interval=250ms",
	}
}

// addressFiles numbers the --web.listen-address-file of every sidecar this
// process starts: a node may have several, one after the other or at once.
var addressFiles atomic.Int64

// launchExporter starts a node's sidecar with args after serve's own and
// waits until it has bound its port: port 0 unless args sets
// --web.listen-address, so the kernel picks a free port that the exporter
// holds from then on, and reports it in its --web.listen-address-file. No
// port is chosen here and bound there, and the address is the sidecar's own,
// never another server's that took the port.
func launchExporter(ctx context.Context, n *harness.Node, binPath, logName string, args []string) (*Exporter, error) {
	addrFile := filepath.Join(n.Dir, fmt.Sprintf("exporter-%d.addr", addressFiles.Add(1)))
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err // left by an earlier run in the same KRE_E2E_DIR
	}
	args = withOverrides([]string{"serve", "--web.listen-address=127.0.0.1:0", "--web.listen-address-file=" + addrFile}, args)
	p, err := startProcess(fmt.Sprintf("exporter %d", n.ID), filepath.Join(n.Dir, logName), binPath, args...)
	if err != nil {
		return nil, err
	}
	addr, err := p.waitAddressFile(ctx, addrFile)
	if err != nil {
		p.stop()
		return nil, err
	}
	return &Exporter{NodeID: n.ID, Addr: addr, URL: "http://" + addr + "/metrics", proc: p}, nil
}

// withOverrides appends extra to args, first dropping the args that set a
// flag extra sets: the exporter's flag parser rejects a repeated flag.
func withOverrides(args, extra []string) []string {
	name := func(arg string) string {
		n, _, _ := strings.Cut(arg, "=")
		return n
	}
	overridden := map[string]bool{}
	for _, e := range extra {
		overridden[name(e)] = true
	}
	var out []string
	for _, a := range args {
		if !overridden[name(a)] {
			out = append(out, a)
		}
	}
	return append(out, extra...)
}
