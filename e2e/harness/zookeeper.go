package harness

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// ZooKeeper mode (Options.ZooKeeper, Kafka 2.8–3.9): one ZooKeeper server and
// three brokers with zookeeper.connect and no process.roles. One of the
// brokers is the controller (ControllerID); it writes its decisions to its own
// controller.log and state-change.log, at INFO only the state changes: an
// unclean election shows there as "Changed partition … from OfflinePartition
// to OnlinePartition" with a leader outside the last ISR.

// RoleZooKeeper is the ZooKeeper server of a ZooKeeper-mode cluster.
const RoleZooKeeper Role = "zookeeper"

// zooKeeperID names the ZooKeeper node in the harness's logs and Node lookups.
const zooKeeperID = 100

// zooKeeperSessionTimeout is the brokers' zookeeper.session.timeout.ms: a
// killed broker's leaderships move once its session expires, about as soon
// as KRaft fencing moves them (broker.session.timeout.ms=8000).
const zooKeeperSessionTimeout = "6000"

// zooKeeperProperties is the ZooKeeper server's config: standalone, its
// AdminServer off (it would take port 8080, which make run and other tools
// use) and no connection limit (the brokers and their clients share 127.0.0.1).
func zooKeeperProperties(n *Node) string {
	return fmt.Sprintf(`# Written by e2e/harness.
dataDir=%s
clientPort=%s
clientPortAddress=127.0.0.1
tickTime=1000
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=
`, n.DataDir, n.zkPort())
}

func (n *Node) zkPort() string {
	_, port, _ := net.SplitHostPort(n.ControllerAddr)
	return port
}

// zooKeeperBrokerProperties turns a KRaft broker's properties into a
// ZooKeeper-mode broker's: no roles, no quorum, broker.id and zookeeper.connect.
func zooKeeperBrokerProperties(props map[string]string, n *Node, zkAddr string) {
	for _, k := range []string{"process.roles", "controller.quorum.voters", "controller.listener.names", "node.id"} {
		delete(props, k)
	}
	props["broker.id"] = fmt.Sprint(n.ID)
	props["zookeeper.connect"] = zkAddr
	props["zookeeper.session.timeout.ms"] = zooKeeperSessionTimeout
	props["listener.security.protocol.map"] = "PLAINTEXT:PLAINTEXT"
}

// supportsZooKeeper: Kafka 4.0 removed ZooKeeper mode.
func supportsZooKeeper(version string) bool {
	return strings.HasPrefix(version, "2.") || strings.HasPrefix(version, "3.")
}

// waitPort waits until something accepts connections on addr.
func waitPort(ctx context.Context, n *Node, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if !n.Running() {
			return fmt.Errorf("node %d (%s) exited\n%s", n.ID, n.Role, n.consoleTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %d (%s) does not listen on %s: %w", n.ID, n.Role, addr, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// ControllerID is the broker that is the active controller, from Metadata:
// in ZooKeeper mode its controller.log and state-change.log hold the
// controller's decisions.
func (c *Cluster) ControllerID() (int32, error) {
	md, err := c.metadata()
	if err != nil {
		return -1, err
	}
	return md.ControllerID, nil
}

// ZooKeeper reports whether the cluster runs in ZooKeeper mode.
func (c *Cluster) ZooKeeper() bool { return c.zk != nil }
