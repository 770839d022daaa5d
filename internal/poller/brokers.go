package poller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

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
	// turn is held by the request on the connection, so that a request's
	// deadline starts when it is sent, not while it waits behind ours.
	turn chan struct{}

	mu         sync.Mutex
	raw        net.Conn // nil until dialed
	dead       bool
	cancelDial context.CancelFunc
}

func newBrokerPool(conf *sarama.Config) *brokerPool {
	return &brokerPool{conf: conf, byAddr: make(map[string]*brokerConn)}
}

// get returns the live connection to addr, opening a new one if there is
// none. Dialing happens in the background; the first request waits for it.
func (p *brokerPool) get(addr string) (*brokerConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.byAddr[addr]; ok && !c.isDead() {
		return c, nil
	}
	c := &brokerConn{addr: addr, b: sarama.NewBroker(addr), turn: make(chan struct{}, 1)}
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

// errOutOfTime: ctx ended before the request was sent (it waited behind
// our own requests on the connection) or before its own limit ran out, so
// it says nothing of the broker.
var errOutOfTime = errors.New("out of time")

// errNoAnswer: the request was sent and not answered in time.
var errNoAnswer = errors.New("no answer in time")

// take waits until ctx is done for the turn on a live connection to addr.
func (p *brokerPool) take(ctx context.Context, addr string) (*brokerConn, error) {
	for {
		c, err := p.get(addr)
		if err != nil {
			return nil, err
		}
		select {
		case c.turn <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s not asked: %w (%w)", addr, errOutOfTime, ctx.Err())
		}
		if !c.isDead() {
			return c, nil
		}
		<-c.turn // the request before ours failed and closed it: redial
	}
}

// call sends one request with req on the connection to addr and waits for
// its answer until ctx is done. On an error or no answer in time the
// connection is discarded; the goroutine still waiting on it is left
// behind (closing the socket unblocks it) and its answer is dropped.
func call[R any](ctx context.Context, p *brokerPool, addr string, req func(*sarama.Broker) (R, error)) (R, error) {
	return callWithin(ctx, 0, p, addr, req)
}

// callWithin is call with a deadline of its own: once sent, the request
// waits at most limit (0: until ctx is done) for its answer. When ctx ends
// first, within the limit, the error is errOutOfTime: the broker was not
// given its time.
func callWithin[R any](ctx context.Context, limit time.Duration, p *brokerPool, addr string, req func(*sarama.Broker) (R, error)) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s not asked: %w (%w)", addr, errOutOfTime, err)
	}
	c, err := p.take(ctx, addr)
	if err != nil {
		return zero, err
	}
	asked := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		asked, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	type answer struct {
		r   R
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := req(c.b)
		<-c.turn
		done <- answer{r, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			p.discard(c)
		}
		return a.r, a.err
	case <-asked.Done():
		p.discard(c)
		if limit > 0 && ctx.Err() != nil {
			return zero, fmt.Errorf("%s not answered before the refresh ended: %w (%w)", addr, errOutOfTime, ctx.Err())
		}
		return zero, fmt.Errorf("%s: %w (%w)", addr, errNoAnswer, asked.Err())
	}
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
