package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Role is what a node runs (process.roles).
type Role string

const (
	RoleBroker     Role = "broker"
	RoleController Role = "controller"
)

// Node is one Kafka process: a broker-only or a controller-only node.
type Node struct {
	ID             int32
	Role           Role
	Dir            string // everything of this node lives below
	LogDir         string // kafka.logs.dir: server.log, state-change.log, controller.log
	DataDir        string // log.dirs (a controller keeps only the metadata log there)
	BrokerAddr     string // host:port of the PLAINTEXT listener; empty on a controller
	ControllerAddr string // host:port of the CONTROLLER listener; empty on a broker

	cluster    *Cluster
	loggingArg string // JVM property naming the logging config
	consoleAt  int64  // size of console.log when the process was last started

	mu       sync.Mutex
	proc     *os.Process
	exited   chan struct{} // closed when proc has been reaped
	waitErr  error
	stopping bool // the exit was asked for (StopNode, KillNode, Close)
	paused   bool // SIGSTOPped by PauseNode
}

// Paused reports whether the node was frozen by PauseNode and not resumed.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paused && n.proc != nil
}

func (n *Node) stoppedOnPurpose() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stopping
}

// Running reports whether the node's process is alive (paused counts as alive).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// PID is the JVM's process id, 0 when not running.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return 0
	}
	return n.proc.Pid
}

func (n *Node) propertiesPath() string { return filepath.Join(n.Dir, "server.properties") }

// start launches the JVM. It does not wait for the broker to be ready.
func (n *Node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		select {
		case <-n.exited:
		default:
			return fmt.Errorf("node %d: already running", n.ID)
		}
	}
	c := n.cluster
	console, err := os.OpenFile(filepath.Join(n.Dir, "console.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer console.Close() // the child keeps its own copy
	if fi, err := console.Stat(); err == nil {
		n.consoleAt = fi.Size()
	}
	main := "kafka.Kafka"
	if n.Role == RoleZooKeeper {
		main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	}
	args := append(c.jvmArgs(n), main, n.propertiesPath())
	cmd := exec.Command(c.java, args...)
	cmd.Dir = n.Dir
	cmd.Stdout, cmd.Stderr = console, console
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("node %d: %w", n.ID, err)
	}
	n.proc = cmd.Process
	n.stopping, n.paused = false, false
	exited := make(chan struct{})
	n.exited = exited
	go func() {
		err := cmd.Wait()
		n.mu.Lock()
		n.waitErr = err
		n.mu.Unlock()
		close(exited)
	}()
	c.logf("node %d: started pid %d (%s %s%s)", n.ID, cmd.Process.Pid, n.Role, n.BrokerAddr, n.ControllerAddr)
	return nil
}

// signal sends sig to the node's process group.
func (n *Node) signal(sig syscall.Signal) (<-chan struct{}, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return nil, fmt.Errorf("node %d: not started", n.ID)
	}
	if err := syscall.Kill(-n.proc.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("node %d: %v: %w", n.ID, sig, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		n.paused = true
	case syscall.SIGCONT:
		n.paused = false
	}
	return n.exited, nil
}

// stop sends sig and waits for the exit; after timeout it escalates to SIGKILL.
func (n *Node) stop(ctx context.Context, sig syscall.Signal, timeout time.Duration) error {
	if !n.Running() {
		return nil
	}
	n.mu.Lock()
	n.stopping = true
	n.mu.Unlock()
	exited, err := n.signal(sig)
	if err != nil {
		return err
	}
	if sig == syscall.SIGTERM {
		// A paused JVM cannot act on SIGTERM.
		_, _ = n.signal(syscall.SIGCONT)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
	case <-timer.C:
	}
	n.cluster.logf("node %d: no exit after %v, killing", n.ID, timeout)
	if _, err := n.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-exited
	return nil
}

// consoleTail returns the end of the node's stdout/stderr, for error messages.
func (n *Node) consoleTail() string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "console.log"))
	return tail(string(b), 3000)
}

// bindExceptionRe matches Kafka's and ZooKeeper's report of a port taken:
// "Socket server failed to bind to 127.0.0.1:…: Address already in use.",
// "java.net.BindException: Address already in use".
var bindExceptionRe = regexp.MustCompile(`(?i)BindException|address already in use`)

// bindFailure is the console line in which the node's last process, now
// exited, said its port was in use, or "".
func (n *Node) bindFailure() string {
	if n.Running() {
		return ""
	}
	n.mu.Lock()
	started, from := n.proc != nil, n.consoleAt
	n.mu.Unlock()
	if !started {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(n.Dir, "console.log"))
	if err != nil || int64(len(b)) < from {
		return ""
	}
	for _, line := range strings.Split(string(b[from:]), "\n") {
		if bindExceptionRe.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// LogFiles returns the files of one log (e.g. "server.log"), rolled ones
// first, oldest to newest, the live file last — the order in which to feed
// them to a reader. It knows both naming schemes: hourly (.yyyy-MM-dd-HH,
// lexical = chronological) and size-based (.N, where .1 is the newest; see
// Rolling).
func (n *Node) LogFiles(name string) ([]string, error) {
	rolled, err := filepath.Glob(filepath.Join(n.LogDir, name+".*"))
	if err != nil {
		return nil, err
	}
	type file struct {
		path  string
		index int
		date  bool
	}
	files := make([]file, 0, len(rolled))
	for _, p := range rolled {
		suffix := strings.TrimPrefix(filepath.Base(p), name+".")
		if i, err := strconv.Atoi(suffix); err == nil {
			files = append(files, file{path: p, index: i})
		} else {
			files = append(files, file{path: p, date: true})
		}
	}
	sort.Slice(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.date != b.date {
			return a.date // dated files come from an earlier, hourly configuration
		}
		if a.date {
			return a.path < b.path
		}
		return a.index > b.index
	})
	out := make([]string, 0, len(files)+1)
	for _, f := range files {
		out = append(out, f.path)
	}
	live := filepath.Join(n.LogDir, name)
	if _, err := os.Stat(live); err == nil {
		out = append(out, live)
	}
	return out, nil
}
