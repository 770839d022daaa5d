package kafkanet

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
)

// minFrameSize is the smallest response a broker sends: the correlation id.
// sarama's handshakes compute the body as size-4, so a smaller size would
// wrap around to 4 GiB.
const minFrameSize = 4

// FrameError is a response frame size no Kafka broker sends: the peer does
// not speak the Kafka protocol (an HTTP server, a TLS port dialed in
// plaintext, a scanner). It is a net.Error that is neither a timeout nor
// temporary, so sarama closes the connection on it.
type FrameError struct {
	Addr   string  // the address dialed
	Size   int32   // the announced size, signed as Kafka reads it
	Prefix [4]byte // the four bytes it was read from
	Max    int32   // the limit in force
}

func (e *FrameError) Error() string {
	msg := fmt.Sprintf("kafka response from %s announces %d bytes (first bytes %s), outside %d..%d: the peer does not speak the Kafka protocol",
		e.Addr, e.Size, quotePrefix(e.Prefix), minFrameSize, e.Max)
	if isTLSRecord(e.Prefix) {
		msg += " (it answered with TLS: is --kafka.tls.enabled missing?)"
	}
	return msg
}

// isTLSRecord tells a TLS alert or handshake record (content type 21 or 22,
// version 3.x): what a TLS listener sends to a plaintext client.
func isTLSRecord(p [4]byte) bool {
	return (p[0] == 0x15 || p[0] == 0x16) && p[1] == 0x03
}

// Timeout is false: waiting longer does not make the peer a broker.
func (e *FrameError) Timeout() bool { return false }

// Temporary is false, for callers that still ask.
func (e *FrameError) Temporary() bool { return false }

// quotePrefix shows the prefix as text when it is printable ASCII ("HTTP"),
// else in hex, so the log line tells what answered.
func quotePrefix(p [4]byte) string {
	for _, b := range p {
		if b < 0x20 || b > 0x7e {
			return fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(p[:]))
		}
	}
	return strconv.Quote(string(p[:]))
}

// boundedConn checks the size of every response frame as the bytes pass
// through Read. It keeps no data: only where the next size prefix starts.
// Like any net.Conn stream, it expects one reader at a time (sarama's).
type boundedConn struct {
	net.Conn
	addr string
	max  int32

	prefix    [4]byte
	prefixLen int   // bytes of the current size prefix read so far
	remaining int64 // body bytes of the current frame still to come
	err       error // the first violation; every later Read returns it
}

func newBoundedConn(conn net.Conn, addr string, max int32) *boundedConn {
	return &boundedConn{Conn: conn, addr: addr, max: max}
}

// Read reads from the connection and fails, dropping what it read, as soon as
// a size prefix in it is out of bounds; the connection is closed then, as
// nothing after a broken frame can be trusted.
func (c *boundedConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if ferr := c.follow(p[:n]); ferr != nil {
		c.err = ferr
		c.Close()
		return 0, ferr
	}
	return n, err
}

// follow advances the framing state over b.
func (c *boundedConn) follow(b []byte) error {
	for len(b) > 0 {
		if c.remaining > 0 {
			skip := min(int64(len(b)), c.remaining)
			c.remaining -= skip
			b = b[skip:]
			continue
		}
		k := copy(c.prefix[c.prefixLen:], b)
		c.prefixLen += k
		b = b[k:]
		if c.prefixLen < len(c.prefix) {
			return nil
		}
		c.prefixLen = 0
		size := int32(binary.BigEndian.Uint32(c.prefix[:]))
		if size < minFrameSize || size > c.max {
			return &FrameError{Addr: c.addr, Size: size, Prefix: c.prefix, Max: c.max}
		}
		c.remaining = int64(size)
	}
	return nil
}
