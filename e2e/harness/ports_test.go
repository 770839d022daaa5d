package harness

import (
	"net"
	"strconv"
	"testing"
)

// The ports the harness hands out lie outside the kernel's ephemeral range,
// so no outgoing connection (a restarting broker's, a client's) can take one
// between its choice and its bind, and are never handed out twice in a
// process, so two servers of one test never get the same port.
func TestPortsOutsideEphemeralRangeAndDistinct(t *testing.T) {
	lo, hi, err := ephemeralRange()
	if err != nil {
		t.Skipf("no ephemeral port range to stay out of: %v", err)
	}
	seen := map[int]bool{}
	for range 500 {
		ports, err := freePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p >= lo && p <= hi {
				t.Fatalf("port %d is in the ephemeral range %d-%d", p, lo, hi)
			}
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}

// A port something listens on is never handed out.
func TestPortsSkipAPortInUse(t *testing.T) {
	next, err := nextPort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(next)))
	if err != nil {
		t.Skipf("cannot occupy the next port %d: %v", next, err)
	}
	defer l.Close()
	p, err := ListenPort()
	if err != nil {
		t.Fatal(err)
	}
	if p == next {
		t.Fatalf("ListenPort() = %d, which is in use", p)
	}
}

func TestPortBlock(t *testing.T) {
	for _, tc := range []struct {
		lo, hi, start, size int
		err                 bool
	}{
		{32768, 60999, 22768, 10000, false}, // Linux's default: below
		{15000, 60999, 10000, 5000, false},  // less room below
		{1024, 60999, 61000, 4536, false},   // none below: above
		{1024, 65000, 0, 0, true},           // none at all
	} {
		start, size, err := portBlock(tc.lo, tc.hi)
		if start != tc.start || size != tc.size || (err != nil) != tc.err {
			t.Errorf("portBlock(%d, %d) = %d, %d, %v; want %d, %d, error %v", tc.lo, tc.hi, start, size, err, tc.start, tc.size, tc.err)
		}
	}
}
