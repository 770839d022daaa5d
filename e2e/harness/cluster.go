package harness

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options configure a cluster. The zero value runs the primary Kafka version
// in a new temporary directory.
type Options struct {
	Version string // Kafka version, e.g. "4.4.0" (default Versions[0])
	Dir     string // working directory, created if missing (default: a new temp dir)
	LibsDir string // a Kafka libs/ directory (default: FetchLibs(Version))
	Logf    func(format string, args ...any)

	Rolling   Rolling           // log file rolling (default: Kafka's hourly rolling)
	LogLevels map[string]string // logger → level, set in the logging config from startup
	// Controllers is the size of the KRaft quorum (default 1). The tests never
	// stop a controller, so one is enough and saves a JVM; production runs 3.
	Controllers int
	// BrokerConfig adds or overrides server.properties entries of the
	// brokers. A cluster-wide default the controller acts on
	// (min.insync.replicas, unclean.leader.election.enable,
	// default.replication.factor, broker.session.timeout.ms) belongs in
	// ControllerConfig as well.
	BrokerConfig     map[string]string
	ControllerConfig map[string]string // the same for the controllers
	// NodeConfig, when set, adds per-broker entries (e.g. an extra listener
	// on a port of its own) after BrokerConfig.
	NodeConfig   func(n *Node) map[string]string
	StartTimeout time.Duration // per start/restart (default 2 minutes)
	// ZooKeeper runs the brokers in ZooKeeper mode (Kafka ≤ 3.9) beside one
	// ZooKeeper server instead of a KRaft controller quorum; Controllers is
	// then ignored and the controller is one of the brokers (ControllerID).
	ZooKeeper bool
	// JVMArgs are added to every node's java command line, e.g. a system
	// property such as Kafka 4's org.apache.kafka.sasl.oauthbearer.allowed.urls.
	JVMArgs []string
}

// Cluster is a running KRaft cluster laid out as in production: three
// broker-only nodes with ids 1, 2, 3 and a dedicated controller quorum with
// ids from 101, so brokers can stop in any number while the metadata keeps
// moving.
type Cluster struct {
	opts        Options
	java        string
	libs        string
	clusterID   string
	nodes       []*Node // the brokers, by id
	controllers []*Node
	zk          *Node // the ZooKeeper server in ZooKeeper mode, else nil
}

// brokerCount is fixed: the scenarios and their assertions name brokers 1, 2, 3.
const brokerCount = 3

// firstControllerID keeps controller ids apart from broker ids, so a log line
// or a metric naming node 101 cannot be mistaken for a broker.
const firstControllerID = 101

// Start formats and starts the controllers and three brokers and waits until
// every broker is registered and unfenced. On error nothing is left running.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Version == "" {
		opts.Version = Versions[0]
	}
	if opts.Controllers <= 0 || opts.ZooKeeper {
		opts.Controllers = 1 // in ZooKeeper mode: the ZooKeeper server's port
	}
	if opts.ZooKeeper && !supportsZooKeeper(opts.Version) {
		return nil, fmt.Errorf("no ZooKeeper mode in Kafka %s (removed in 4.0)", opts.Version)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "kafka-e2e-*"); err != nil {
			return nil, err
		}
	}
	c = &Cluster{opts: opts}
	if c.java, err = findJava(); err != nil {
		return nil, err
	}
	c.libs = opts.LibsDir
	if c.libs == "" {
		if c.libs, err = FetchLibs(ctx, opts.Version); err != nil {
			return nil, err
		}
	}
	if c.clusterID, err = randomClusterID(); err != nil {
		return nil, err
	}
	c.logf("Kafka %s, cluster %s in %s", opts.Version, c.clusterID, opts.Dir)
	// A port can still be taken between its choice and the JVM's bind (by a
	// server of another process): the cluster then starts again, on new
	// ports, since every node's configuration names the others' addresses.
	err = c.retryBind("cluster start", "on new ports", func() error { return c.launch(ctx) }, func() error {
		c.Close()
		return c.removeNodeDirs()
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// bindTries is how many times a start whose process found its port taken is
// tried in all.
const bindTries = 3

// retryBind runs attempt; when it fails and a node's JVM exited saying that
// its port was in use, it logs that line, runs before and tries again, up to
// bindTries in all. how says how the next try differs, for the log line.
func (c *Cluster) retryBind(what, how string, attempt, before func() error) error {
	for try := 1; ; try++ {
		err := attempt()
		if err == nil {
			return nil
		}
		line := c.bindFailure()
		if line == "" || try == bindTries {
			return err
		}
		c.logf("%s: %s; trying again %s (try %d of %d)", what, line, how, try+1, bindTries)
		if err := before(); err != nil {
			return err
		}
	}
}

// bindFailure is the first line in which a node that exited since its last
// start says its port was in use, prefixed with the node's id, or "".
func (c *Cluster) bindFailure() string {
	for _, n := range c.all() {
		if line := n.bindFailure(); line != "" {
			return fmt.Sprintf("node %d (%s) %s", n.ID, n.Role, line)
		}
	}
	return ""
}

// launch lays the nodes out on new ports, writes their configuration,
// formats their storage, starts them and waits until every broker is
// registered and unfenced.
func (c *Cluster) launch(ctx context.Context) error {
	opts := c.opts
	ports, err := freePorts(brokerCount + opts.Controllers)
	if err != nil {
		return err
	}
	newNode := func(id int32, role Role) *Node {
		dir := filepath.Join(opts.Dir, fmt.Sprintf("node-%d", id))
		return &Node{
			ID: id, Role: role, Dir: dir, LogDir: filepath.Join(dir, "logs"),
			DataDir: filepath.Join(dir, "data"), cluster: c,
		}
	}
	c.zk, c.controllers, c.nodes = nil, nil, nil
	var voters []string
	if opts.ZooKeeper {
		c.zk = newNode(zooKeeperID, RoleZooKeeper)
		c.zk.ControllerAddr = fmt.Sprintf("127.0.0.1:%d", ports[brokerCount])
	}
	for i := range opts.Controllers {
		if opts.ZooKeeper {
			break
		}
		n := newNode(int32(firstControllerID+i), RoleController)
		n.ControllerAddr = fmt.Sprintf("127.0.0.1:%d", ports[brokerCount+i])
		c.controllers = append(c.controllers, n)
		voters = append(voters, fmt.Sprintf("%d@%s", n.ID, n.ControllerAddr))
	}
	for i := range brokerCount {
		n := newNode(int32(i+1), RoleBroker)
		n.BrokerAddr = fmt.Sprintf("127.0.0.1:%d", ports[i])
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.all() {
		if err := os.MkdirAll(n.LogDir, 0o755); err != nil {
			return err
		}
		extra := opts.ControllerConfig
		if n.Role == RoleBroker {
			extra = opts.BrokerConfig
			if opts.NodeConfig != nil {
				extra = make(map[string]string)
				for k, v := range opts.BrokerConfig {
					extra[k] = v
				}
				for k, v := range opts.NodeConfig(n) {
					extra[k] = v
				}
			}
		}
		props := serverProperties(n, strings.Join(voters, ","), extra)
		if n.Role == RoleZooKeeper {
			props = zooKeeperProperties(n)
		}
		if err := os.WriteFile(n.propertiesPath(), []byte(props), 0o644); err != nil {
			return err
		}
		if n.loggingArg, err = writeLoggingConfig(n.Dir, backendFor(opts.Version), opts.Rolling, opts.LogLevels); err != nil {
			return err
		}
	}
	if c.zk != nil {
		// A broker gives up on ZooKeeper after zookeeper.connection.timeout.ms:
		// the server first.
		if err := c.zk.start(); err != nil {
			return err
		}
		if err := waitPort(ctx, c.zk, c.zk.ControllerAddr); err != nil {
			return err
		}
		return c.startBrokers(ctx)
	}
	if err := forEach(c.all(), func(n *Node) error { return c.format(ctx, n) }); err != nil {
		return err
	}
	// Brokers retry the quorum until it answers, so all start at once.
	if err := forEach(c.all(), func(n *Node) error { return n.start() }); err != nil {
		return err
	}
	return clusterReady(c, ctx)
}

// clusterReady is WaitReady; the tests of the start's retry, which run no
// Kafka, replace it.
var clusterReady = (*Cluster).WaitReady

// removeNodeDirs removes what a failed start left of the nodes, so that the
// next one formats fresh storage.
func (c *Cluster) removeNodeDirs() error {
	for _, n := range c.all() {
		if err := os.RemoveAll(n.Dir); err != nil {
			return err
		}
	}
	return nil
}

// StartT starts a cluster for a test. The cluster is closed when the test
// ends; its directory is removed unless the test failed, KRE_E2E_KEEP is set
// or the directory is under KRE_E2E_DIR, in which case the path is logged.
func StartT(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	if opts.Dir == "" {
		dir, err := testDir(t)
		if err != nil {
			t.Fatal(err)
		}
		opts.Dir = dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		keep(t, opts.Dir)
		t.Fatalf("start Kafka %s cluster: %v", opts.Version, err)
	}
	t.Cleanup(func() {
		c.Close()
		keep(t, opts.Dir)
	})
	return c
}

// testDir is a fresh directory for a test's cluster: under $KRE_E2E_DIR,
// named after the test (so scripts can find the logs, see
// e2e/capture-fixtures.sh), or else a new temporary directory.
func testDir(t testing.TB) (string, error) {
	root := os.Getenv("KRE_E2E_DIR")
	if root == "" {
		return os.MkdirTemp("", "kafka-e2e-*")
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
}

func keep(t testing.TB, dir string) {
	if t.Failed() || os.Getenv("KRE_E2E_KEEP") != "" || os.Getenv("KRE_E2E_DIR") != "" {
		t.Logf("cluster files kept in %s", dir)
		return
	}
	os.RemoveAll(dir)
}

// Close stops every node (SIGTERM, then SIGKILL after 15s): the brokers
// first, whose controlled shutdown needs the controllers, then the
// controllers. It is safe to call more than once.
func (c *Cluster) Close() {
	stop := func(n *Node) error { return n.stop(context.Background(), syscall.SIGTERM, 15*time.Second) }
	_ = forEach(c.nodes, stop)
	_ = forEach(c.controllers, stop)
	if c.zk != nil {
		_ = stop(c.zk)
	}
}

// startBrokers starts the brokers and waits until they are registered.
func (c *Cluster) startBrokers(ctx context.Context) error {
	if err := forEach(c.nodes, func(n *Node) error { return n.start() }); err != nil {
		return err
	}
	return clusterReady(c, ctx)
}

// Version is the Kafka version the cluster runs.
func (c *Cluster) Version() string { return c.opts.Version }

// Dir is the cluster's working directory.
func (c *Cluster) Dir() string { return c.opts.Dir }

// Nodes returns the brokers, ordered by id.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Controllers returns the controller-only nodes, ordered by id. Their
// controller.log holds the quorum's decisions (elections, fencing).
func (c *Cluster) Controllers() []*Node { return c.controllers }

// Node returns the node with the given id, a broker (1..3) or a controller
// (101…); it panics on an unknown id, which is a bug in the caller.
func (c *Cluster) Node(id int32) *Node {
	for _, n := range c.all() {
		if n.ID == id {
			return n
		}
	}
	panic(fmt.Sprintf("harness: no node %d", id))
}

// all lists the ZooKeeper server or the controllers, then the brokers.
func (c *Cluster) all() []*Node {
	out := slices.Clone(c.controllers)
	if c.zk != nil {
		out = append(out, c.zk)
	}
	return append(out, c.nodes...)
}

// Bootstrap lists the PLAINTEXT addresses of the running, unpaused nodes.
func (c *Cluster) Bootstrap() []string {
	var addrs []string
	for _, n := range c.nodes {
		if n.Running() && !n.Paused() {
			addrs = append(addrs, n.BrokerAddr)
		}
	}
	return addrs
}

// StopNode shuts a node down gracefully (SIGTERM: controlled shutdown) and
// waits for the process to exit.
func (c *Cluster) StopNode(ctx context.Context, id int32) error {
	c.logf("node %d: stopping (SIGTERM)", id)
	return c.Node(id).stop(ctx, syscall.SIGTERM, time.Minute)
}

// KillNode kills a node with SIGKILL (a crash: no controlled shutdown).
func (c *Cluster) KillNode(ctx context.Context, id int32) error {
	c.logf("node %d: killing (SIGKILL)", id)
	return c.Node(id).stop(ctx, syscall.SIGKILL, time.Minute)
}

// PauseNode freezes a node with SIGSTOP (like a long GC pause: sockets stay
// open, nothing is answered).
func (c *Cluster) PauseNode(id int32) error {
	c.logf("node %d: pausing (SIGSTOP)", id)
	_, err := c.Node(id).signal(syscall.SIGSTOP)
	return err
}

// ResumeNode releases a paused node with SIGCONT.
func (c *Cluster) ResumeNode(id int32) error {
	c.logf("node %d: resuming (SIGCONT)", id)
	_, err := c.Node(id).signal(syscall.SIGCONT)
	return err
}

// StartNode restarts a stopped node and waits until the cluster sees it as an
// unfenced broker again. Runtime logger levels (SetLogLevel) are not kept
// across a restart, as in Kafka.
//
// The node keeps its address, which clients, sidecars and the quorum know
// it by: if the port was taken while it was down, the start is tried again
// on the same port a second later.
func (c *Cluster) StartNode(ctx context.Context, id int32) error {
	n := c.Node(id)
	return c.retryBind(fmt.Sprintf("node %d restart", id), "on the same port in 1s", func() error {
		if err := n.start(); err != nil {
			return err
		}
		return clusterReady(c, ctx)
	}, func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
			return nil
		}
	})
}

func (c *Cluster) jvmArgs(n *Node) []string {
	// A controller holds only the cluster metadata: a quarter of a broker's
	// heap is plenty.
	heap := []string{"-Xmx512m", "-Xms128m"}
	switch n.Role {
	case RoleController:
		heap = []string{"-Xmx256m", "-Xms64m"}
	case RoleZooKeeper:
		heap = []string{"-Xmx128m", "-Xms32m"}
	}
	args := slices.Concat(heap, []string{
		"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true",
		"-Dkafka.logs.dir=" + n.LogDir,
		n.loggingArg,
	})
	args = append(args, c.opts.JVMArgs...)
	return append(args, "-cp", filepath.Join(c.libs, "*"))
}

// format runs Kafka's StorageTool on a node, as `kafka-storage.sh format`.
// With a static controller.quorum.voters list the same arguments work on 3.9
// and 4.x (4.x would otherwise want --standalone or --initial-controllers).
func (c *Cluster) format(ctx context.Context, n *Node) error {
	cmd := exec.CommandContext(ctx, c.java, "-Xmx256m", "-XX:TieredStopAtLevel=1",
		n.loggingArg, "-Dkafka.logs.dir="+n.LogDir,
		"-cp", filepath.Join(c.libs, "*"),
		"kafka.tools.StorageTool", "format", "-t", c.clusterID, "-c", n.propertiesPath())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("node %d: StorageTool format: %w\n%s", n.ID, err, tail(string(out), 3000))
	}
	return nil
}

// forEach runs f on every node at once and joins the errors.
func forEach(nodes []*Node, f func(*Node) error) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(n)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Cluster) logf(format string, args ...any) { c.opts.Logf(format, args...) }

func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		if p := filepath.Join(home, "bin", "java"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("java not found (install a JDK 17+ or set JAVA_HOME): %w", err)
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// randomClusterID makes a Kafka Uuid string: 16 random bytes, URL-safe
// base64 without padding. Kafka's own generator rejects ids starting with '-'.
func randomClusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if !strings.HasPrefix(id, "-") {
			return id, nil
		}
	}
}
