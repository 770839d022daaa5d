package main

import (
	"net"
	"strings"
	"testing"
)

func TestPickAddr(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := l.Addr().(*net.TCPAddr).Port

	var notes []string
	got, err := pickAddr(taken, "Prometheus", &notes)
	if err != nil {
		t.Fatal(err)
	}
	if got == l.Addr().String() || !strings.HasPrefix(got, "127.0.0.1:") {
		t.Errorf("taken port %d: got %s, want another loopback port", taken, got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "is taken: Prometheus listens on "+got) {
		t.Errorf("taken port: notes = %q, want one naming Prometheus and %s", notes, got)
	}

	l.Close()
	notes = nil
	if got, err := pickAddr(taken, "Prometheus", &notes); err != nil || got != l.Addr().String() || len(notes) != 0 {
		t.Errorf("free port %d: got %s, %v, notes %q; want it, and no note", taken, got, err, notes)
	}
}
