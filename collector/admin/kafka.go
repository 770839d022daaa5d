package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/IBM/sarama"
)

// debugReplicaID is Kafka's DEBUGGING_REPLICA_ID: a ListOffsets request that
// carries it is answered by any replica, from its own log, without the
// isolation level, i.e. LATEST = that replica's log end offset.
const debugReplicaID = -2

// minISRConfig is the one topic config the poller reads.
const minISRConfig = "min.insync.replicas"

// partitionLogger is the broker logger that prints HW updates (DEBUG) and
// "Not increasing HWM … under min ISR" (TRACE).
const partitionLogger = "kafka.cluster.Partition"

// brokerPool keeps one sarama connection per broker address, opened lazily.
// Plain sarama.Broker, not sarama.Client: the poller chooses which broker
// answers each request (its own broker for Metadata, the leader for HW,
// every replica for its LEO), and a Client would add its own metadata
// refreshes and retries on top.
//
// A connection on which a request failed or went unanswered is closed and
// never used again. sarama does not close a connection after a read timeout
// (shouldCloseBrokerConn treats a timeout as harmless), and when the
// ApiVersions request of Open times out it sends a second one on the same
// connection and carries on: once a frozen broker resumes, its late answers
// are read as the answers to later requests ("correlation ID didn't match").
// Requests sharing one sarama.Broker are not the cause: sarama holds the
// broker's lock from writing a request to reading its answer.
type brokerPool struct {
	conf   *sarama.Config
	mu     sync.Mutex
	byAddr map[string]*brokerConn
}

// brokerConn is one sarama connection and the socket under it, which the
// pool closes to unblock a request it stopped waiting for: sarama's own
// Close waits for the request to finish.
type brokerConn struct {
	addr string
	b    *sarama.Broker

	mu         sync.Mutex
	raw        net.Conn // nil until dialled
	dead       bool
	cancelDial context.CancelFunc
}

func newBrokerPool(conf *sarama.Config) *brokerPool {
	return &brokerPool{conf: conf, byAddr: make(map[string]*brokerConn)}
}

// get returns the live connection to addr, opening a new one if there is
// none. Dialling happens in the background; the first request waits for it.
func (p *brokerPool) get(addr string) (*brokerConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.byAddr[addr]; ok && !c.isDead() {
		return c, nil
	}
	c := &brokerConn{addr: addr, b: sarama.NewBroker(addr)}
	// Each connection dials through its own dialer, so that the pool holds
	// the socket and can close it.
	conf := *p.conf
	var inner dialer = conf.Net.Proxy.Dialer
	if !conf.Net.Proxy.Enable || conf.Net.Proxy.Dialer == nil {
		inner = &net.Dialer{Timeout: conf.Net.DialTimeout, KeepAlive: conf.Net.KeepAlive, LocalAddr: conf.Net.LocalAddr}
	}
	conf.Net.Proxy.Enable, conf.Net.Proxy.Dialer = true, &connDialer{inner: inner, c: c}
	if err := c.b.Open(&conf); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, err
	}
	p.byAddr[addr] = c
	return c, nil
}

// discard closes c and forgets it, so that the next request redials.
func (p *brokerPool) discard(c *brokerConn) {
	p.mu.Lock()
	if p.byAddr[c.addr] == c {
		delete(p.byAddr, c.addr)
	}
	p.mu.Unlock()
	c.kill()
}

func (p *brokerPool) close() {
	p.mu.Lock()
	conns := make([]*brokerConn, 0, len(p.byAddr))
	for _, c := range p.byAddr {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		p.discard(c)
	}
}

func (c *brokerConn) isDead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// kill closes the socket (failing the request in flight at once) and then
// the sarama connection, which waits for that request to return.
func (c *brokerConn) kill() {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead = true
	raw, cancel := c.raw, c.cancelDial
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if raw != nil {
		_ = raw.Close()
	}
	go func() { _ = c.b.Close() }() // ErrNotConnected when the dial itself failed
}

// dialer and contextDialer are sarama's Net.Proxy.Dialer and the optional
// interface the kafkanet dialer adds (golang.org/x/net/proxy's).
type dialer interface {
	Dial(network, addr string) (net.Conn, error)
}

type contextDialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// connDialer dials one brokerConn's socket through the configured dialer
// and hands it to the brokerConn.
type connDialer struct {
	inner dialer
	c     *brokerConn
}

func (d *connDialer) Dial(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.c.mu.Lock()
	if d.c.dead {
		d.c.mu.Unlock()
		return nil, net.ErrClosed
	}
	d.c.cancelDial = cancel
	d.c.mu.Unlock()

	var (
		raw net.Conn
		err error
	)
	if cd, ok := d.inner.(contextDialer); ok {
		raw, err = cd.DialContext(ctx, network, addr)
	} else {
		raw, err = d.inner.Dial(network, addr)
	}
	if err != nil {
		return nil, err
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	d.c.cancelDial = nil
	if d.c.dead {
		_ = raw.Close()
		return nil, net.ErrClosed
	}
	d.c.raw = raw
	return timeoutKills{raw, d.c}, nil
}

// timeoutKills closes its brokerConn on the first read that times out,
// before sarama can send anything else on it (see brokerPool).
type timeoutKills struct {
	net.Conn
	c *brokerConn
}

func (t timeoutKills) Read(b []byte) (int, error) {
	n, err := t.Conn.Read(b)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.c.kill()
	}
	return n, err
}

// call sends one request with req on the connection to addr and waits for
// its answer until ctx is done. On an error or no answer in time the
// connection is discarded; the goroutine still waiting on it is left
// behind (closing the socket unblocks it) and its answer is dropped.
func call[R any](ctx context.Context, p *brokerPool, addr string, req func(*sarama.Broker) (R, error)) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s not asked: %w", addr, err)
	}
	c, err := p.get(addr)
	if err != nil {
		return zero, err
	}
	type answer struct {
		r   R
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := req(c.b)
		done <- answer{r, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			p.discard(c)
		}
		return a.r, a.err
	case <-ctx.Done():
		p.discard(c)
		return zero, fmt.Errorf("no answer from %s in time: %w", addr, ctx.Err())
	}
}

// metadata asks addr for every topic, never creating one.
func (p *brokerPool) metadata(ctx context.Context, addr string) (*sarama.MetadataResponse, error) {
	req := sarama.NewMetadataRequest(p.conf.Version, nil) // nil = all topics
	req.AllowAutoTopicCreation = false
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.MetadataResponse, error) { return b.GetMetadata(req) })
	if err != nil {
		return nil, fmt.Errorf("metadata from %s: %w", addr, err)
	}
	return resp, nil
}

// offsetAnswer is one partition's answer to a ListOffsets LATEST.
type offsetAnswer struct {
	offset      int64
	leaderEpoch int32
	ok          bool // answered without error
}

// listOffsetsLatest sends one ListOffsets LATEST to addr for the partitions
// parts[i] of idx, and hands each answer to put(i, answer) before returning:
// the decoded response is garbage by then. With replicaID -1 (a consumer,
// read_uncommitted) the leader answers its high watermark; with
// debugReplicaID the broker answers its own log end offset. Partitions
// answered with an error (or not at all) are not put.
func (p *brokerPool) listOffsetsLatest(ctx context.Context, addr string, replicaID int32, parts []plannedPartition, idx []int32, put func(i int32, ans offsetAnswer)) error {
	req := sarama.NewOffsetRequest(p.conf.Version)
	if replicaID != -1 {
		req.SetReplicaID(replicaID)
	}
	req.IsolationLevel = sarama.ReadUncommitted
	for _, i := range idx {
		k := &parts[i].key
		req.AddBlock(k.Topic, k.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.OffsetResponse, error) { return b.GetAvailableOffsets(req) })
	if err != nil {
		return fmt.Errorf("list offsets from %s: %w", addr, err)
	}
	for _, i := range idx {
		k := &parts[i].key
		if blk := resp.GetBlock(k.Topic, k.Partition); blk != nil && blk.Err == sarama.ErrNoError {
			put(i, offsetAnswer{offset: blk.Offset, leaderEpoch: blk.LeaderEpoch, ok: true})
		}
	}
	return nil
}

// describeMinISR reads min.insync.replicas of topics in one DescribeConfigs.
// Topics the broker could not describe (deleted meanwhile, no ACL) are left
// out; unparsable values too.
func (p *brokerPool) describeMinISR(ctx context.Context, addr string, topics []string) (map[string]int, error) {
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(p.conf.Version), IncludeSynonyms: true}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{
			Type: sarama.TopicResource, Name: t, ConfigNames: []string{minISRConfig},
		})
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) })
	if err != nil {
		return nil, fmt.Errorf("describe configs from %s: %w", addr, err)
	}
	out := make(map[string]int, len(topics))
	for _, r := range resp.Resources {
		if r == nil || r.ErrorCode != 0 {
			continue
		}
		for _, e := range r.Configs {
			if e == nil || e.Name != minISRConfig {
				continue
			}
			// Value is already the effective one: the topic override, else
			// the first broker-level synonym.
			if v, err := strconv.Atoi(e.Value); err == nil && v > 0 {
				out[r.Name] = v
			}
		}
	}
	return out, nil
}

// brokerLoggerLevel returns the level of logger on broker id as the broker
// reports it ("" when it does not say).
func (p *brokerPool) brokerLoggerLevel(ctx context.Context, addr string, id int32, logger string) (string, error) {
	req := &sarama.DescribeConfigsRequest{
		Version: describeConfigsVersion(p.conf.Version),
		Resources: []*sarama.ConfigResource{{
			Type: sarama.BrokerLoggerResource, Name: strconv.Itoa(int(id)), ConfigNames: []string{logger},
		}},
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) })
	if err != nil {
		return "", err
	}
	for _, r := range resp.Resources {
		if r == nil {
			continue
		}
		if r.ErrorCode != 0 {
			return "", fmt.Errorf("describe broker logger: %w (%s)", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
		for _, e := range r.Configs {
			if e != nil && e.Name == logger {
				return e.Value, nil
			}
		}
	}
	return "", nil
}

// alterBrokerLogger sets (level != nil) or deletes (level == nil, back to
// the broker's configured level) logger on broker id. Kafka applies
// BROKER_LOGGER changes only on the broker that receives them.
func (p *brokerPool) alterBrokerLogger(ctx context.Context, addr string, id int32, logger string, level *string) error {
	op := sarama.IncrementalAlterConfigsOperationSet
	if level == nil {
		op = sarama.IncrementalAlterConfigsOperationDelete
	}
	req := &sarama.IncrementalAlterConfigsRequest{
		Version: 1,
		Resources: []*sarama.IncrementalAlterConfigsResource{{
			Type:          sarama.BrokerLoggerResource,
			Name:          strconv.Itoa(int(id)),
			ConfigEntries: map[string]sarama.IncrementalAlterConfigsEntry{logger: {Operation: op, Value: level}},
		}},
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.IncrementalAlterConfigsResponse, error) {
		return b.IncrementalAlterConfigs(req)
	})
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if r != nil && r.ErrorCode != 0 {
			return fmt.Errorf("%w (%s)", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
	}
	return nil
}

// describeConfigsVersion mirrors sarama's ClusterAdmin choice.
func describeConfigsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_8_0_0):
		return 4
	case v.IsAtLeast(sarama.V2_6_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 1
	}
	return 0
}
