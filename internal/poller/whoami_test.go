package poller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
)

// TestBrokerAtServer: the --kafka.server addresses against the advertised
// ones, as the network sees them.
func TestBrokerAtServer(t *testing.T) {
	dns := map[string][]netip.Addr{
		"localhost":        {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"kafka-1.internal": {netip.MustParseAddr("10.0.0.1")},
		"kafka-2.internal": {netip.MustParseAddr("10.0.0.2")},
		"kafka-3.internal": {netip.MustParseAddr("10.0.0.3")},
		"lb.internal":      {netip.MustParseAddr("10.0.9.9")},
	}
	lookup := func(_ context.Context, host string) []netip.Addr { return dns[host] }
	here := hostAddrs{netip.MustParseAddr("10.0.0.2"): true}
	onLoopback := map[int32]string{1: "127.0.0.1:9092", 2: "127.0.0.1:9093", 3: "127.0.0.1:9094"}
	byName := map[int32]string{1: "kafka-1.internal:9092", 2: "kafka-2.internal:9092", 3: "kafka-3.internal:9092"}
	byIP := map[int32]string{1: "10.0.0.1:9092", 2: "10.0.0.2:9092", 3: "10.0.0.3:9092"}
	for _, c := range []struct {
		name    string
		brokers map[int32]string
		servers []string
		want    string
	}{
		{"same string but for case", byName, []string{"KAFKA-3.internal:9092"}, "3 same address"},
		{"localhost against 127.0.0.1 (issue 24)", onLoopback, []string{"localhost:9093"}, "2 same IP and port"},
		{"IPv6 loopback against 127.0.0.1", onLoopback, []string{"[::1]:9094"}, "3 both addresses are this host's"},
		{"a name against its IP", byIP, []string{"kafka-1.internal:9092"}, "1 same IP and port"},
		{"an IP against a name", byName, []string{"10.0.0.3:9092"}, "3 same IP and port"},
		{"localhost against this host's interface", byIP, []string{"localhost:9092"}, "2 both addresses are this host's"},
		{"every broker listed: the one on this host", byName, []string{"kafka-1.internal:9092", "kafka-2.internal:9092", "kafka-3.internal:9092"}, "2 same address, the only one on this host"},
		{"several on this host", onLoopback, []string{"localhost:9092", "localhost:9093"}, "none, equally [1 2]"},
		{"another port", onLoopback, []string{"localhost:9999"}, "none"},
		{"a load balancer", byName, []string{"lb.internal:9092"}, "none"},
		{"a name that does not resolve", byName, []string{"nowhere.invalid:9092"}, "none"},
		{"not host:port", byName, []string{"kafka-1.internal"}, "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := brokerAtServer(context.Background(), c.brokers, c.servers, lookup, here)
			got := fmt.Sprint(m.id, " ", m.how)
			switch {
			case m.id < 0 && m.ambiguous != nil:
				got = fmt.Sprint("none, equally ", m.ambiguous)
			case m.id < 0:
				got = "none"
			}
			if got != c.want {
				t.Errorf("want %s, got %s", c.want, got)
			}
		})
	}
}

// TestPollerIdentifiesLocalhost is issue 24's quick start: --kafka.server
// names the broker localhost while it advertises 127.0.0.1 (kfake's
// listeners), and the other way round; the sidecar finds its broker, says so
// and exports the partitions it leads.
func TestPollerIdentifiesLocalhost(t *testing.T) {
	f := fakekafka.New(t, kfake.ListenFn(advertiseAs("localhost")))
	f.CreateTopic("orders", nil, 0, 1, 2, 1)
	_, port, _ := net.SplitHostPort(f.C.ListenAddrs()[1])
	for _, server := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		a, _ := newTestPoller(t, []string{server}, -1, ScopeLeader, Options{}, nil)
		a.refresh(context.Background())
		s := a.Snapshot()
		if !s.BrokerIdentified || a.brokerID != 1 {
			t.Fatalf("%s: want broker 1 identified, got %d (identified %v)", server, a.brokerID, s.BrokerIdentified)
		}
		expect(t, server+": leaders", table(s, func(p *Partition) any { return p.Leader }), "orders/1=1 orders/3=1")
	}
}

// advertiseAs makes kfake advertise its brokers under host instead of the
// address they listen on (kfake advertises its listener's Addr).
func advertiseAs(host string) func(network, addr string) (net.Listener, error) {
	return func(network, addr string) (net.Listener, error) {
		l, err := net.Listen(network, addr)
		if err != nil {
			return nil, err
		}
		_, port, _ := net.SplitHostPort(l.Addr().String())
		return namedListener{l, host + ":" + port}, nil
	}
}

type namedListener struct {
	net.Listener
	name string
}

func (l namedListener) Addr() net.Addr { return namedAddr(l.name) }

type namedAddr string

func (a namedAddr) Network() string { return "tcp" }
func (a namedAddr) String() string  { return string(a) }

// brokerLogStore is a log store whose lines named broker id.
type brokerLogStore struct {
	fakeLogStore
	id int32
}

func (s brokerLogStore) LogBrokerID() (int32, bool) { return s.id, s.id >= 0 }

// TestPollerIdentifiesFromLogLines: --kafka.server lists every broker, all on
// this host, so no address tells which is this sidecar's; its log lines do.
// Without them it stays unknown: the gauge says so and no partition is
// exported in leader scope.
func TestPollerIdentifiesFromLogLines(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2, 2)
	var logged strings.Builder
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeLeader, Options{Logger: slogTo(&logged)}, nil)
	a.refresh(context.Background())
	a.refresh(context.Background())
	if s := a.Snapshot(); s.BrokerIdentified || len(s.Topics) != 0 {
		t.Errorf("every broker on this host: want unidentified and no partitions, got identified %v, %d topics", s.BrokerIdentified, len(s.Topics))
	}
	if n := strings.Count(logged.String(), "set --kafka.broker-id"); n != 1 {
		t.Errorf("want one WARN naming --kafka.broker-id, got %d in %s", n, logged.String())
	}

	a, _ = newTestPoller(t, f.C.ListenAddrs(), -1, ScopeLeader, Options{LogStore: brokerLogStore{fakeLogStore{}, 2}}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	if !s.BrokerIdentified || a.brokerID != 2 {
		t.Fatalf("want broker 2 from the log lines, got %d", a.brokerID)
	}
	expect(t, "leaders", table(s, func(p *Partition) any { return p.Leader }), "orders/2=2 orders/3=2")

	// A broker id the cluster does not advertise (yet) is not taken.
	a, _ = newTestPoller(t, f.C.ListenAddrs()[:1], -1, ScopeLeader, Options{LogStore: brokerLogStore{fakeLogStore{}, 7}}, nil)
	a.refresh(context.Background())
	if a.brokerID != 0 {
		t.Errorf("log lines name broker 7, not in the cluster: want the address match (0), got %d", a.brokerID)
	}
}

// TestPollerOwnBrokerDownLeaderScope (issue 24 item 2): in leader scope a
// sidecar whose own broker does not answer drops its partition series at
// the first such refresh, whether Metadata failed altogether (its only
// server was its broker) or came from a bootstrap server; up, the counters
// and the reason stay. Back one refresh after the broker answers again.
func TestPollerOwnBrokerDownLeaderScope(t *testing.T) {
	ports := freePorts(t, 3)
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(ports...))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("orders", 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.MoveTopicPartition("orders", 0, 0); err != nil {
		t.Fatal(err)
	}
	a, _ := newTestPoller(t, c.ListenAddrs(), 0, ScopeLeader, Options{}, nil)
	a.refresh(context.Background())
	if s := a.Snapshot(); !s.Up || len(s.Topics) == 0 {
		t.Fatalf("want up with partitions, got up %v topics %+v", s.Up, s.Topics)
	}
	c.Close()
	a.refresh(context.Background())
	s := a.Snapshot()
	if s.Up || len(s.Topics) != 0 || s.RequestErrors[RequestMetadata] == 0 || !s.BrokerIdentified {
		t.Errorf("own broker dead: want down, no partitions at once, metadata errors counted; got up %v topics %d errors %v", s.Up, len(s.Topics), s.RequestErrors)
	}
	expect(t, "brokers", brokersOf(s), "0=false 1=false 2=false")

	// Frozen own broker, Metadata from a bootstrap server: still nothing.
	f, fz := frozenCluster(t)
	addrs := f.C.ListenAddrs()
	a, clock := newTestPoller(t, []string{addrs[2], addrs[0]}, 2, ScopeLeader, Options{}, func(c *Config) {
		c.RequestTimeout = time.Second
		c.Groups.LastStableOffset = true // its series follow the partitions'
	})
	a.refresh(context.Background())
	expect(t, "before the freeze", table(a.Snapshot(), func(p *Partition) any { return p.Leader }), "orders/2=2")
	expect(t, "LSOs before the freeze", lsoTable(a.Snapshot()), "orders/2=30 held 0s")
	fz.set(2, true)
	a.refresh(context.Background())
	s = a.Snapshot()
	if !s.Up || len(s.Topics) != 0 {
		t.Errorf("own broker frozen, Metadata from broker 0: want up and no partitions, got up %v topics %+v", s.Up, s.Topics)
	}
	expect(t, "brokers while frozen", brokersOf(s), "0=true 1=true 2=false")
	fz.set(2, false)
	// Back: the first answers may be the broker's stale metadata image, so
	// its partitions come back after rejoinHold (two refreshes, at least 5s).
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.refresh(context.Background())
		if s := a.Snapshot(); strings.Contains(brokersOf(s), "2=true") {
			expect(t, "first refresh after the thaw", table(s, func(p *Partition) any { return p.Leader }), "")
			expect(t, "LSOs in the first refresh after the thaw", lsoTable(s), "")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker 2 not answering after the thaw: %s", brokersOf(a.Snapshot()))
		}
	}
	clock.Advance(29 * time.Second)
	a.refresh(context.Background())
	expect(t, "a refresh within the hold", table(a.Snapshot(), func(p *Partition) any { return p.Leader }), "")
	expect(t, "LSOs within the hold", lsoTable(a.Snapshot()), "")
	clock.Advance(time.Second)
	a.refresh(context.Background())
	expect(t, "the refresh after the hold", table(a.Snapshot(), func(p *Partition) any { return p.Leader }), "orders/2=2")
}

// TestPollerOwnBrokerDownClusterScope: in cluster scope the grace stays
// (TestPollerStaleAfterGrace): one exporter of every partition duplicates
// nothing.
func TestPollerOwnBrokerDownClusterScope(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("orders", 1, nil); err != nil {
		t.Fatal(err)
	}
	a, _ := newTestPoller(t, c.ListenAddrs(), 0, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	c.Close()
	a.refresh(context.Background())
	expect(t, "kept within the grace", table(a.Snapshot(), func(p *Partition) any { return p.Leader }), "orders/0=0")
}

// slogTo logs as text into w.
func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// TestDropPartitionsTakesGroupPositions: a refresh that drops this sidecar's
// partitions (own broker silent, or rejoining) drops the consumer groups'
// positions on them too, or a rejoining sidecar would export a group's
// position on a partition another sidecar now leads; the group itself stays.
func TestDropPartitionsTakesGroupPositions(t *testing.T) {
	s := &Snapshot{
		Topics:        []Topic{{Name: "orders", Partitions: []Partition{{Topic: "orders"}}}},
		StableOffsets: []StableOffset{{Topic: "orders"}},
		Groups:        []ConsumerGroup{{Name: "billing", State: "Stable", Members: 2, Partitions: []GroupPartition{{Topic: "orders"}}}},
	}
	dropPartitions(s)
	if s.Topics != nil || s.StableOffsets != nil || s.Groups[0].Partitions != nil {
		t.Errorf("want no partition, LSO or group position, got %+v", s)
	}
	if g := s.Groups[0]; g.Name != "billing" || g.State != "Stable" || g.Members != 2 {
		t.Errorf("want the group kept, got %+v", g)
	}
}
