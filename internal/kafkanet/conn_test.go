package kafkanet

import (
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
)

// frames builds a response stream: for each body length, a size prefix and
// that many bytes.
func frames(bodies ...int) []byte {
	var b []byte
	for _, n := range bodies {
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		b = append(b, make([]byte, n)...)
	}
	return b
}

// followInChunks feeds stream to a fresh boundedConn's framing in pieces of
// size chunk, as reads of any size would deliver it.
func followInChunks(stream []byte, chunk int, max int32) error {
	c := newBoundedConn(nil, "broker:9092", max)
	for len(stream) > 0 {
		k := min(chunk, len(stream))
		if err := c.follow(stream[:k]); err != nil {
			return err
		}
		stream = stream[k:]
	}
	return nil
}

func TestFollowAcceptsValidFramesSplitAnywhere(t *testing.T) {
	stream := frames(4, 5, 100, 4, 1000, 64)
	for chunk := 1; chunk <= len(stream); chunk++ {
		if err := followInChunks(stream, chunk, 1000); err != nil {
			t.Fatalf("chunks of %d: %v", chunk, err)
		}
	}
}

func TestFollowRejectsSizesNoBrokerSends(t *testing.T) {
	for name, tc := range map[string]struct {
		prefix []byte
		want   string
	}{
		"HTTP answer":    {[]byte("HTTP/1.1 400 Bad Request\r\n"), `1213486160 bytes (first bytes "HTTP")`},
		"0x7fffffff":     {[]byte{0x7f, 0xff, 0xff, 0xff}, "2147483647 bytes (first bytes 0x7fffffff)"},
		"negative":       {[]byte{0xff, 0xff, 0xff, 0xfe}, "-2 bytes"},
		"zero":           {[]byte{0, 0, 0, 0}, "0 bytes"},
		"no correlation": {[]byte{0, 0, 0, 3, 1, 2, 3}, "3 bytes"},
		"one over":       {[]byte{0, 0, 0x03, 0xe9}, "1001 bytes"},
		"TLS alert":      {[]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50}, "is --kafka.tls.enabled missing?"},
	} {
		for _, chunk := range []int{1, 2, 4096} {
			// A valid frame first: the check must hold past the first response.
			err := followInChunks(append(frames(10), tc.prefix...), chunk, 1000)
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("%s, chunks of %d: want a *FrameError, got %v", name, chunk, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "outside 4..1000") {
				t.Errorf("%s: error %q does not say %q and the bounds", name, err, tc.want)
			}
		}
	}
}

// sarama closes a broker connection only on errors it takes for transport
// failures: a net.Error that is not a timeout is one.
func TestFrameErrorIsAPermanentNetError(t *testing.T) {
	var err error = &FrameError{Addr: "x:1", Size: -1, Max: 10}
	var ne net.Error
	if !errors.As(err, &ne) || ne.Timeout() {
		t.Fatalf("want a net.Error that is not a timeout, got %#v", err)
	}
}

// After a violation the connection is closed and stays failed: no byte that
// follows a broken frame reaches the client.
func TestReadFailsAndClosesOnViolation(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := newBoundedConn(client, "pipe", 1000)
	go func() {
		// The write fails once the conn under test closes the pipe, which is the point.
		_, _ = server.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	}()
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	var fe *FrameError
	if n != 0 || !errors.As(err, &fe) {
		t.Fatalf("want 0 bytes and a *FrameError, got %d, %v", n, err)
	}
	if _, err2 := c.Read(buf); !errors.Is(err2, err) {
		t.Errorf("want the same error on the next read, got %v", err2)
	}
	if _, err := server.Write([]byte("x")); err == nil {
		t.Errorf("want the connection closed after the violation")
	}
}
