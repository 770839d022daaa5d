package kafkanet

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/IBM/sarama"
)

// Dialer opens TCP (and, with TLS set, TLS) connections whose reads are
// bounded by the Kafka response framing. It satisfies sarama's
// Net.Proxy.Dialer (golang.org/x/net/proxy's Dialer and ContextDialer).
type Dialer struct {
	// Timeout bounds the TCP connect and the TLS handshake together; sarama
	// does not apply Net.DialTimeout to a proxy dialer.
	Timeout   time.Duration
	KeepAlive time.Duration
	LocalAddr net.Addr
	// TLS, when not nil, is the client configuration for every broker; an
	// empty ServerName is taken from the address dialed, as sarama does.
	TLS *tls.Config
	// MaxFrameSize is the largest response frame accepted, in bytes;
	// 0 means sarama.MaxResponseSize.
	MaxFrameSize int32
}

// Dial connects to addr; sarama calls it for every broker connection.
func (d *Dialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

// DialContext is Dial with a context for the connect and the TLS handshake.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: d.Timeout, KeepAlive: d.KeepAlive, LocalAddr: d.LocalAddr}
	var conn net.Conn
	var err error
	if d.TLS != nil {
		conn, err = (&tls.Dialer{NetDialer: nd, Config: d.TLS}).DialContext(ctx, network, addr)
	} else {
		conn, err = nd.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	return newBoundedConn(conn, addr, d.maxFrameSize()), nil
}

func (d *Dialer) maxFrameSize() int32 {
	if d.MaxFrameSize > 0 {
		return d.MaxFrameSize
	}
	return sarama.MaxResponseSize
}

// Install makes conf dial every broker through a Dialer bounded at
// sarama.MaxResponseSize. Call it after conf's Net.TLS and timeouts are set:
// the TLS configuration moves into the Dialer (sarama would otherwise layer
// TLS above the bounded connection, where the framing is encrypted).
//
// It refuses a conf that already uses a proxy dialer, and SASL handshake v0,
// whose unframed tokens (an empty PLAIN answer) the bounded connection would
// reject; sarama's default, v1, frames every token as a Kafka response.
func Install(conf *sarama.Config) error {
	if conf.Net.Proxy.Enable {
		return errors.New("kafkanet: the Kafka client already dials through a proxy")
	}
	if conf.Net.SASL.Enable && conf.Net.SASL.Version == sarama.SASLHandshakeV0 {
		return errors.New("kafkanet: SASL handshake v0 is not supported, use v1 (Kafka 1.0 and later)")
	}
	d := &Dialer{
		Timeout:   conf.Net.DialTimeout,
		KeepAlive: conf.Net.KeepAlive,
		LocalAddr: conf.Net.LocalAddr,
	}
	if conf.Net.TLS.Enable {
		d.TLS = conf.Net.TLS.Config
		if d.TLS == nil {
			d.TLS = &tls.Config{MinVersion: tls.VersionTLS12} // sarama's own default
		}
		conf.Net.TLS.Enable = false
		conf.Net.TLS.Config = nil
	}
	conf.Net.Proxy.Enable = true
	conf.Net.Proxy.Dialer = d
	return nil
}
