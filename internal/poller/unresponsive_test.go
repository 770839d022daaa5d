package poller

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// freezer stops kfake brokers the way SIGSTOP stops a real one: the kernel
// still accepts connections and takes requests, nothing is answered, and
// on thaw everything taken meanwhile is answered, in order.
type freezer struct {
	mu     sync.Mutex
	cond   *sync.Cond
	frozen map[int32]bool
	next   int32 // kfake opens its listeners in broker id order
}

func newFreezer(t *testing.T) *freezer {
	f := &freezer{frozen: make(map[int32]bool)}
	f.cond = sync.NewCond(&f.mu)
	t.Cleanup(func() { f.set(-1, false) })
	return f
}

func (f *freezer) listen(network, addr string) (net.Listener, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.next
	f.next++
	return &frozenListener{Listener: l, f: f, id: id}, nil
}

// set freezes or thaws broker id; -1 is every broker.
func (f *freezer) set(id int32, frozen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id < 0 {
		clear(f.frozen)
	} else {
		f.frozen[id] = frozen
	}
	f.cond.Broadcast()
}

func (f *freezer) waitThawed(id int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.frozen[id] {
		f.cond.Wait()
	}
}

type frozenListener struct {
	net.Listener
	f  *freezer
	id int32
}

func (l *frozenListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &frozenConn{Conn: c, f: l.f, id: l.id}, nil
}

// frozenConn hands what it read to the broker only while thawed.
type frozenConn struct {
	net.Conn
	f  *freezer
	id int32
}

func (c *frozenConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.f.waitThawed(c.id)
	return n, err
}

// frozenCluster is three kfake brokers behind a freezer, with orders/0..2
// led by brokers 0..2 (each replicated on all three), min ISR 2, and offsets
// answered from the table.
func frozenCluster(t *testing.T) (*fakekafka.Kafka, *freezer) {
	fz := newFreezer(t)
	f := fakekafka.New(t, kfake.ListenFn(fz.listen))
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	for p := range int32(3) {
		f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: p}, fakekafka.Offsets{HW: 10 * int64(p+1), LEO: 10 * int64(p+1)})
	}
	return f, fz
}

func timedRefresh(a *Poller) time.Duration {
	start := time.Now()
	a.refresh(context.Background())
	return time.Since(start)
}

// brokersOf renders the snapshot's broker list as "id=responsive …".
func brokersOf(s *Snapshot) string {
	out := ""
	for _, b := range s.Brokers {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("%d=%v", b.ID, b.Responsive)
	}
	return out
}

// checkBudget fails unless a refresh with a 1s budget took about 1s: not
// less (it waited for the frozen broker) and not much more (it did not wait
// for a whole sarama timeout after the budget, nor for two in a row).
func checkBudget(t *testing.T, took time.Duration) {
	t.Helper()
	t.Logf("refresh took %v", took)
	if took < 900*time.Millisecond || took > 1800*time.Millisecond {
		t.Errorf("want the refresh to end after its 1s budget, took %v", took)
	}
}

// TestPollerFrozenBroker: broker 2 freezes with its connection open. The
// refresh ends after --kafka.request-timeout with what brokers 0 and 1
// answered; the partition broker 2 leads has no HW and no stall verdict,
// broker 2's replica lags are absent, and broker 2 is reported
// unresponsive. After the thaw, its late answers do not confuse the next
// refresh (no "correlation ID didn't match").
func TestPollerFrozenBroker(t *testing.T) {
	f, fz := frozenCluster(t)
	a, _ := newTestPoller(t, f.C.ListenAddrs()[:1], 0, ScopeCluster, Options{}, func(c *Config) { c.RequestTimeout = time.Second })
	hwLEO := func() string {
		return table(a.Snapshot(), func(p *Partition) any { return fmt.Sprint(p.HWKnown, p.HW, p.LEOKnown, p.HWKnown && p.LEOKnown) })
	}
	lagReplicas := func() string {
		return table(a.Snapshot(), func(p *Partition) any {
			var rs []int32
			for _, l := range p.Lags {
				rs = append(rs, l.Replica)
			}
			return rs
		})
	}
	a.refresh(context.Background())
	expect(t, "warm-up", hwLEO(), "orders/0=true 10 true true orders/1=true 20 true true orders/2=true 30 true true")

	fz.set(2, true)
	checkBudget(t, timedRefresh(a))
	s := a.Snapshot()
	if !s.Up {
		t.Error("want up: the metadata broker answered")
	}
	expect(t, "frozen leader of orders/2", hwLEO(), "orders/0=true 10 true true orders/1=true 20 true true orders/2=false 0 false false")
	expect(t, "replicas with a lag", lagReplicas(), "orders/0=[1] orders/1=[0] orders/2=[]")
	expect(t, "brokers", brokersOf(s), "0=true 1=true 2=false")
	if s.RequestErrors[RequestListOffsets] != 1 || s.RequestErrors[RequestListOffsetsLEO] != 0 {
		t.Errorf("want one ListOffsets error (the LEO request skipped), got %v", s.RequestErrors)
	}

	fz.set(2, false)
	time.Sleep(100 * time.Millisecond) // the late answers arrive
	a.refresh(context.Background())
	s = a.Snapshot()
	expect(t, "thawed", hwLEO(), "orders/0=true 10 true true orders/1=true 20 true true orders/2=true 30 true true")
	expect(t, "replicas with a lag after the thaw", lagReplicas(), "orders/0=[1 2] orders/1=[2 0] orders/2=[0 1]")
	expect(t, "brokers after the thaw", brokersOf(s), "0=true 1=true 2=true")
	if s.RequestErrors[RequestListOffsets] != 1 || s.RequestErrors[RequestListOffsetsLEO] != 0 {
		t.Errorf("want no new errors after the thaw, got %v", s.RequestErrors)
	}
}

// TestPollerFrozenBeforeConnect: broker 2 is frozen before the poller ever
// connects to it, so sarama's connection set-up (ApiVersions, which sarama
// retries on the same connection after a timeout) is what hangs; it answers
// slowly once, then normally.
func TestPollerFrozenBeforeConnect(t *testing.T) {
	f, fz := frozenCluster(t)
	fz.set(2, true)
	a, _ := newTestPoller(t, f.C.ListenAddrs()[:1], 0, ScopeCluster, Options{}, func(c *Config) { c.RequestTimeout = time.Second })
	checkBudget(t, timedRefresh(a))
	expect(t, "brokers", brokersOf(a.Snapshot()), "0=true 1=true 2=false")

	fz.set(2, false)
	time.Sleep(100 * time.Millisecond)
	for i := range 2 {
		a.refresh(context.Background())
		s := a.Snapshot()
		expect(t, fmt.Sprint("HW after the thaw, refresh ", i), table(s, func(p *Partition) any { return p.HW }), "orders/0=10 orders/1=20 orders/2=30")
		expect(t, fmt.Sprint("brokers after the thaw, refresh ", i), brokersOf(s), "0=true 1=true 2=true")
		if n := s.RequestErrors[RequestListOffsets] + s.RequestErrors[RequestListOffsetsLEO] + s.RequestErrors[RequestDescribeConfigs]; n != 1 {
			t.Errorf("refresh %d: want only the first refresh's error, got %v", i, s.RequestErrors)
		}
	}
}

// TestPollerFrozenMetadataBroker: this sidecar's own broker (asked first
// for Metadata) freezes; the refresh asks a bootstrap server beside it after
// half the budget and still ends within the budget.
func TestPollerFrozenMetadataBroker(t *testing.T) {
	f, fz := frozenCluster(t)
	addrs := f.C.ListenAddrs()
	a, _ := newTestPoller(t, []string{addrs[2], addrs[0]}, 2, ScopeCluster, Options{}, func(c *Config) { c.RequestTimeout = time.Second })
	a.refresh(context.Background())
	fz.set(2, true)
	checkBudget(t, timedRefresh(a))
	s := a.Snapshot()
	if !s.Up || s.RequestErrors[RequestMetadata] != 0 {
		t.Errorf("want up with the bootstrap server's metadata, got up %v errors %v", s.Up, s.RequestErrors)
	}
	expect(t, "brokers", brokersOf(s), "0=true 1=true 2=false")
	expect(t, "HW known", table(s, func(p *Partition) any { return p.HWKnown }), "orders/0=true orders/1=true orders/2=false")
}

// TestPoolTimedOutConnectionNotReused is the "correlation ID didn't match"
// seen after SIGCONT: sarama's connection set-up times out on ApiVersions,
// retries it on the same connection, times out again and keeps the
// connection; once the broker resumes, both late answers wait on it to be
// read as the answers to the next requests. The pool drops a connection on
// its first read timeout, so the next request redials.
func TestPoolTimedOutConnectionNotReused(t *testing.T) {
	f, fz := frozenCluster(t)
	addr := f.C.ListenAddrs()[2]
	cfg := &Config{
		Servers: []string{addr}, Version: "3.9.0", Scope: ScopeCluster,
		RefreshInterval: time.Minute, RequestTimeout: 300 * time.Millisecond, StallThreshold: time.Minute,
	}
	sc, err := cfg.saramaConfig(connection{})
	if err != nil {
		t.Fatal(err)
	}
	p := newBrokerPool(sc)
	t.Cleanup(p.close)

	fz.set(2, true)
	if _, err := p.get(addr); err != nil { // connection set-up starts, and hangs
		t.Fatal(err)
	}
	time.Sleep(900 * time.Millisecond) // both ApiVersions time out
	fz.set(2, false)
	time.Sleep(100 * time.Millisecond) // their answers arrive

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.metadata(ctx, addr); err != nil {
		t.Errorf("want the request after the thaw answered on a new connection, got %v", err)
	}
}

// TestLogLevelRaiseSkipsFrozenBroker: with --kafka.partition-log-level the
// raise after a refresh does not wait two more timeouts on this sidecar's
// broker when that refresh found it unresponsive; it is retried later.
func TestLogLevelRaiseSkipsFrozenBroker(t *testing.T) {
	f, fz := frozenCluster(t)
	a, _ := newTestPoller(t, f.C.ListenAddrs()[:1], 2, ScopeCluster, Options{}, func(c *Config) {
		c.RequestTimeout = time.Second
		c.PartitionLogLevel = "TRACE"
	})
	fz.set(2, true)
	a.refresh(context.Background())
	start := time.Now()
	a.raiseLogLevel()
	if took := time.Since(start); took > 200*time.Millisecond || a.level.raised {
		t.Errorf("want the raise skipped at once, took %v, raised %v", took, a.level.raised)
	}
}

// TestPollerProbesAnUnresponsiveBroker: a broker that did not answer the last
// refresh is given only the probe budget, so a frozen follower does not hold
// every refresh (and with it the stall verdict) to the whole deadline; once
// thawed it answers within the probe and is responsive again.
func TestPollerProbesAnUnresponsiveBroker(t *testing.T) {
	f, fz := frozenCluster(t)
	a, _ := newTestPoller(t, f.C.ListenAddrs()[:1], 0, ScopeCluster, Options{}, func(c *Config) { c.RequestTimeout = 3 * time.Second })
	a.refresh(context.Background())
	fz.set(2, true)
	if took := timedRefresh(a); took < 2900*time.Millisecond || took > 4*time.Second {
		t.Errorf("want the first refresh after the freeze to wait its 3s budget, took %v", took)
	}
	if took := timedRefresh(a); took < 900*time.Millisecond || took > 1900*time.Millisecond {
		t.Errorf("want the next refresh to probe the frozen broker for 1s only, took %v", took)
	}
	fz.set(2, false)
	time.Sleep(100 * time.Millisecond)
	a.refresh(context.Background())
	expect(t, "brokers after the thaw", brokersOf(a.Snapshot()), "0=true 1=true 2=true")
}
