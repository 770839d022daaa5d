package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for java (see fakeJava).
func TestMain(m *testing.M) {
	if os.Getenv("KRE_FAKE_JAVA") == "1" {
		fakeJava(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// fakeJava plays the two parts of Kafka the start's retry depends on: the
// StorageTool succeeds, and a node binds every listener of its properties
// file (the last argument), or exits 1 with Kafka's message when a port is
// taken. It then runs until it is signaled.
func fakeJava(args []string) {
	for _, a := range args {
		if a == "kafka.tools.StorageTool" {
			os.Exit(0)
		}
	}
	b, err := os.ReadFile(args[len(args)-1])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "listeners=")
		if !ok {
			continue
		}
		for _, listener := range strings.Split(v, ",") {
			_, addr, _ := strings.Cut(listener, "://")
			if _, err := net.Listen("tcp", addr); err != nil {
				fmt.Printf("[2026-12-03 12:00:00,000] ERROR [KafkaRaftServer nodeId=1] Fatal error during broker startup. "+
					"Prepare to shutdown (kafka.server.BrokerServer)\norg.apache.kafka.common.KafkaException: "+
					"Socket server failed to bind to %s: Address already in use.\n", addr)
				os.Exit(1)
			}
		}
	}
	fmt.Println(fakeListening)
	select {}
}

// fakeListening is what fakeJava prints once it holds its ports: a connect
// could be answered by whoever took the port.
const fakeListening = "fake java: listening"

// withFakeKafka makes Start run fakeJava for java, wait for the nodes to
// listen instead of asking Kafka for its brokers, and take its ports from
// choose; it returns what the cluster logged.
func withFakeKafka(t *testing.T, choose func() (int, error)) *logBuffer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(home, "bin", "java")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JAVA_HOME", home)
	t.Setenv("KRE_FAKE_JAVA", "1")
	oldReady, oldChoose := clusterReady, choosePort
	t.Cleanup(func() { clusterReady, choosePort = oldReady, oldChoose })
	clusterReady = func(c *Cluster, ctx context.Context) error { return c.waitListening(ctx) }
	choosePort = choose
	return &logBuffer{}
}

// waitListening waits until every node not stopped on purpose says, since
// its last start, that it holds its ports, failing as soon as one exits.
func (c *Cluster) waitListening(ctx context.Context) error {
	return c.poll(ctx, "nodes listening", func() (bool, error) {
		for _, n := range c.all() {
			if n.stoppedOnPurpose() {
				continue
			}
			n.mu.Lock()
			from := n.consoleAt
			n.mu.Unlock()
			b, err := os.ReadFile(filepath.Join(n.Dir, "console.log"))
			if err != nil || int64(len(b)) < from || !strings.Contains(string(b[from:]), fakeListening) {
				return false, fmt.Errorf("node %d not listening yet", n.ID) // poll reports an exit
			}
		}
		return true, nil
	})
}

type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuffer) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// A port taken between its choice and the broker's bind (here: chosen, then
// held by the test) makes the broker exit with "Address already in use";
// the cluster is started again on new ports, and the retry is logged.
func TestStartRetriesOnNewPortsWhenAPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	first := true
	log := withFakeKafka(t, func() (int, error) {
		if first {
			first = false
			return takenPort, nil // broker 1's port: the first chosen
		}
		return ListenPort()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Version: "4.4.0", Dir: t.TempDir(), LibsDir: t.TempDir(), Logf: log.logf})
	if err != nil {
		t.Fatalf("start: %v\nlog:\n%s", err, log)
	}
	defer c.Close()
	if got := log.String(); !strings.Contains(got, "Address already in use") || !strings.Contains(got, "try 2 of 3") {
		t.Errorf("the retry is not logged with the bind failure:\n%s", got)
	}
	if addr := c.Node(1).BrokerAddr; addr == fmt.Sprintf("127.0.0.1:%d", takenPort) {
		t.Errorf("broker 1 is still on the taken port %s", addr)
	}
	for _, n := range c.all() {
		if !n.Running() {
			t.Errorf("node %d is not running after the retry:\n%s", n.ID, n.consoleTail())
		}
	}
}

// A port that stays taken fails the start after bindTries tries, with the
// bind failure in the error, and leaves nothing running.
func TestStartGivesUpAfterThreeBindFailures(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	n := 0
	log := withFakeKafka(t, func() (int, error) {
		n++
		if n%(brokerCount+1) == 1 { // broker 1's port, on every try
			return takenPort, nil
		}
		return ListenPort()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Start(ctx, Options{Version: "4.4.0", Dir: t.TempDir(), LibsDir: t.TempDir(), Logf: log.logf}); err == nil ||
		!strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("start = %v, want the bind failure", err)
	}
	if got := strings.Count(log.String(), "trying again"); got != bindTries-1 {
		t.Errorf("%d retries logged, want %d:\n%s", got, bindTries-1, log)
	}
}

// A restarted node keeps its address; a port taken while it was down is
// tried again, and the restart succeeds once the port is free.
func TestStartNodeRetriesOnTheSamePort(t *testing.T) {
	log := withFakeKafka(t, ListenPort)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Version: "4.4.0", Dir: t.TempDir(), LibsDir: t.TempDir(), Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.StopNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	addr := c.Node(2).BrokerAddr
	taken, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(500*time.Millisecond, func() { taken.Close() })
	if err := c.StartNode(ctx, 2); err != nil {
		t.Fatalf("restart: %v\nlog:\n%s", err, log)
	}
	if got := c.Node(2).BrokerAddr; got != addr {
		t.Errorf("node 2 moved from %s to %s", addr, got)
	}
	if got := log.String(); !strings.Contains(got, "node 2 restart: node 2 (broker)") || !strings.Contains(got, "on the same port") {
		t.Errorf("the restart's retry is not logged:\n%s", got)
	}
}
