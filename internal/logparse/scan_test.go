package logparse

import (
	"bytes"
	"testing"
)

// TestSameBytes: the word compare agrees with bytes.Equal for every length
// around its 8–32 byte window and a difference at every position.
func TestSameBytes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + i)
		}
		if !sameBytes(a, bytes.Clone(a)) {
			t.Fatalf("len %d: equal bytes reported different", n)
		}
		for i := 0; i < n; i++ {
			b := bytes.Clone(a)
			b[i] ^= 0x80
			if sameBytes(a, b) {
				t.Fatalf("len %d: a difference at %d not seen", n, i)
			}
		}
		if n > 0 && sameBytes(a, a[:n-1]) {
			t.Fatalf("len %d: different lengths reported equal", n)
		}
	}
}
