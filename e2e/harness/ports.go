package harness

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Servers the harness starts (Kafka nodes, ZooKeeper, Prometheus,
// Alertmanager) are given their port before they bind it. A port from the
// kernel's ephemeral range can be taken in between by any outgoing
// connection on the machine, and the kernel may hand the same free port to
// two callers in a row; so the ports come from a block below the ephemeral
// range, through a process-wide counter, each checked free by a bind.

// portBlockSize is how many ports the block holds: far more than a test
// binary starts servers.
const portBlockSize = 10000

// lowestPort keeps the block above the well-known and registered ports most
// services use.
const lowestPort = 10000

var portAlloc struct {
	mu         sync.Mutex
	lo, size   int // the block
	next, used int // the next offset in the block, and how many were tried
	err        error
	once       sync.Once
}

// ListenPort returns a loopback TCP port for a server to bind: outside the
// ephemeral range, never returned before in this process, and free a moment
// ago (a server in another process may still take it: its start is retried,
// see bindFailed).
func ListenPort() (int, error) {
	portAlloc.once.Do(initPorts)
	portAlloc.mu.Lock()
	defer portAlloc.mu.Unlock()
	if portAlloc.err != nil {
		return 0, portAlloc.err
	}
	for portAlloc.used < portAlloc.size {
		p := portAlloc.lo + portAlloc.next
		portAlloc.next = (portAlloc.next + 1) % portAlloc.size
		portAlloc.used++
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("harness: all %d ports of %d-%d handed out or in use", portAlloc.size, portAlloc.lo, portAlloc.lo+portAlloc.size-1)
}

// ListenAddr is ListenPort as a 127.0.0.1:port address.
func ListenAddr() (string, error) {
	p, err := ListenPort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// nextPort is the port ListenPort tries next, for tests.
func nextPort() (int, error) {
	portAlloc.once.Do(initPorts)
	portAlloc.mu.Lock()
	defer portAlloc.mu.Unlock()
	return portAlloc.lo + portAlloc.next, portAlloc.err
}

func initPorts() {
	lo, hi, err := ephemeralRange()
	if err != nil {
		lo, hi = 32768, 60999 // Linux's default
	}
	portAlloc.lo, portAlloc.size, portAlloc.err = portBlock(lo, hi)
	if portAlloc.err == nil {
		// Test binaries running at once (go test ./e2e/... runs packages in
		// parallel) start at different places in the block.
		portAlloc.next = os.Getpid() * 7919 % portAlloc.size
	}
}

// portBlock is the block below the ephemeral range lo-hi, or above it when
// there is no room below.
func portBlock(lo, hi int) (start, size int, err error) {
	if below := lo - lowestPort; below >= 1000 {
		size = min(below, portBlockSize)
		return lo - size, size, nil
	}
	if above := 65535 - hi; above >= 1000 {
		return hi + 1, min(above, portBlockSize), nil
	}
	return 0, 0, fmt.Errorf("harness: no room for ports outside the ephemeral range %d-%d", lo, hi)
}

// ephemeralRange is the kernel's range for the local ports of outgoing
// connections (and of port-0 binds).
func ephemeralRange() (lo, hi int, err error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("ip_local_port_range: %q", b)
	}
	if lo, err = strconv.Atoi(f[0]); err == nil {
		hi, err = strconv.Atoi(f[1])
	}
	if err == nil && (lo < 1 || hi > 65535 || lo > hi) {
		err = errors.New("ip_local_port_range out of bounds")
	}
	return lo, hi, err
}

// choosePort is ListenPort; the tests of the start's retry replace it to
// hand out a port they hold.
var choosePort = ListenPort

// freePorts returns n distinct ports from choosePort.
func freePorts(n int) ([]int, error) {
	out := make([]int, 0, n)
	for range n {
		p, err := choosePort()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
