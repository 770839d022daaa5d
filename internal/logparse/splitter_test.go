package logparse

import (
	"strconv"
	"strings"
	"testing"
)

// split feeds lines through a Splitter and returns the records as
// "line/lines|first|cont" strings.
func split(t *testing.T, lines ...string) ([]string, int64) {
	t.Helper()
	s := NewSplitter()
	var out []string
	add := func(r *Record) {
		out = append(out, strings.Join([]string{strconv.Itoa(r.Line) + "/" + strconv.Itoa(r.Lines), string(r.First), string(r.Cont)}, "|"))
	}
	for _, l := range lines {
		if r := s.Push([]byte(l)); r != nil {
			add(r)
		}
	}
	for r := s.Flush(); r != nil; r = s.Flush() {
		add(r)
	}
	if s.Pending() {
		t.Error("want nothing pending after Flush")
	}
	return out, s.Malformed()
}

const (
	h1 = "[2025-10-16 16:07:21,017] ERROR [ReplicaManager broker=1] Error processing append operation on partition t-0 (kafka.server.ReplicaManager)"
	h2 = "[2025-10-16 16:07:21,018] INFO [Partition t-0 broker=1] ISR updated to 1,2  and version updated to 3 (kafka.cluster.Partition)"
	h3 = "[2025-10-16 16:07:21,019] ERROR [ReplicaManager broker=2] Error processing append operation on partition t-1 (kafka.server.ReplicaManager)"
	ex = "org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 1 is insufficient"
)

func TestSplitter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        []string
		want      []string
		malformed int64
	}{
		{"single lines", []string{h1, h2}, []string{"1/1|" + h1 + "|", "2/1|" + h2 + "|"}, 0},
		{"exception continuation", []string{h1, ex, h2}, []string{"1/2|" + h1 + "|" + ex, "3/1|" + h2 + "|"}, 0},
		{"blank line before exception (log4j2 2.25)", []string{h1, "", ex, h2}, []string{"1/3|" + h1 + "|\n" + ex, "4/1|" + h2 + "|"}, 0},
		{
			"stack trace",
			[]string{h1, "java.lang.IllegalStateException: boom", "\tat a.B.c(B.java:1)", "\t... 3 more"},
			[]string{"1/4|" + h1 + "|java.lang.IllegalStateException: boom\n\tat a.B.c(B.java:1)\n\t... 3 more"},
			0,
		},
		{"orphans before the first header", []string{"\tat x", "", h2}, []string{"3/1|" + h2 + "|"}, 2},
		{"CRLF", []string{h2 + "\r"}, []string{"1/1|" + h2 + "|"}, 0},
		{"NUL junk", []string{h2, "\x00\x00\x00", h2}, []string{"1/1|" + h2 + "|", "3/1|" + h2 + "|"}, 1},
		{
			"docker --timestamps",
			[]string{"2019-04-11T12:32:24.676797004Z " + h1, "2019-04-11T12:32:24.676797004Z " + ex},
			[]string{"1/2|" + h1 + "|" + ex},
			0,
		},
		{
			"docker compose",
			[]string{"kafka-1   | " + h1, "kafka-1   | " + ex, "kafka-2  | " + h2},
			[]string{"1/2|" + h1 + "|" + ex, "3/1|" + h2 + "|"},
			0,
		},
		{
			"docker compose, two brokers interleaved",
			[]string{"kafka-1  | " + h1, "kafka-2  | " + h3, "kafka-1  | " + ex, "kafka-2      | " + ex, "kafka-2  | " + h2},
			[]string{"2/2|" + h3 + "|" + ex, "1/2|" + h1 + "|" + ex, "5/1|" + h2 + "|"},
			0,
		},
		{
			"docker compose, continuation of a source without a header",
			[]string{"kafka-1 | " + h1, "kafka-2 | " + ex, h2},
			[]string{"3/1|" + h2 + "|", "1/1|" + h1 + "|"},
			1,
		},
		{
			"a message with a bar is not a source",
			[]string{h1, "ISR | is insufficient", h2},
			[]string{"1/2|" + h1 + "|is insufficient", "3/1|" + h2 + "|"},
			0,
		},
		{
			"CRI full",
			[]string{"2024-03-02T11:04:10.311234567Z stdout F " + h1, "2024-03-02T11:04:10.311234567Z stdout F " + ex},
			[]string{"1/2|" + h1 + "|" + ex},
			0,
		},
		{
			"CRI partial chunks joined",
			[]string{"2024-03-02T11:04:10.311Z stdout P " + h1[:40], "2024-03-02T11:04:10.311Z stdout P " + h1[40:90], "2024-03-02T11:04:10.311Z stdout F " + h1[90:], "2024-03-02T11:04:10.312Z stderr F " + h2},
			[]string{"1/3|" + h1 + "|", "4/1|" + h2 + "|"},
			0,
		},
		{
			"CRI partial cut off by a plain line",
			[]string{"2024-03-02T11:04:10.311Z stdout P " + h1[:40], h2},
			[]string{"2/1|" + h2 + "|"},
			1,
		},
		{
			"spring boot is a header, not a docker timestamp",
			[]string{"2025-02-03T08:15:00.123Z  INFO 4242 --- [main-handler-1] kafka.cluster.Partition                  : [Partition orders-3 broker=0] x"},
			[]string{"1/1|2025-02-03T08:15:00.123Z  INFO 4242 --- [main-handler-1] kafka.cluster.Partition                  : [Partition orders-3 broker=0] x|"},
			0,
		},
		{
			"strimzi",
			[]string{"2024-03-02 11:04:10,311 INFO [Partition orders-3 broker=2] x (kafka.cluster.Partition) [t-1]", "\tat y"},
			[]string{"1/2|2024-03-02 11:04:10,311 INFO [Partition orders-3 broker=2] x (kafka.cluster.Partition) [t-1]|\tat y"},
			0,
		},
		{
			"slf4j-simple",
			[]string{"[main] ERROR kafka.server.ReplicaManager - x", ex},
			[]string{"1/2|[main] ERROR kafka.server.ReplicaManager - x|" + ex},
			0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, malformed := split(t, tc.in...)
			if strings.Join(tc.want, "\n---\n") != strings.Join(got, "\n---\n") {
				t.Errorf("want\n%q\ngot\n%q", tc.want, got)
			}
			if tc.malformed != malformed {
				t.Errorf("want %d malformed, got %d", tc.malformed, malformed)
			}
		})
	}
}

func TestSplitterBounds(t *testing.T) {
	s := NewSplitter()
	huge := []byte(h2 + strings.Repeat("x", 10<<20))
	if r := s.Push(huge); r != nil {
		t.Fatal("want no record yet")
	}
	for i := 0; i < 3000; i++ { // ~300 KB of stack trace
		s.Push([]byte("\tat org.apache.kafka.some.Frame.method(Frame.java:123) ~[kafka.jar:4.1.0]"))
	}
	r := s.Flush()
	if r == nil {
		t.Fatal("want the record on Flush")
	}
	if len(r.First) != MaxLineBytes {
		t.Errorf("want First cut to %d bytes, got %d", MaxLineBytes, len(r.First))
	}
	if len(r.Cont) > MaxContBytes {
		t.Errorf("want Cont ≤ %d bytes, got %d", MaxContBytes, len(r.Cont))
	}
	if r.Lines != 3001 {
		t.Errorf("want 3001 lines, got %d", r.Lines)
	}
	if s.Malformed() < 2 {
		t.Errorf("want the cut line and dropped frames counted as malformed, got %d", s.Malformed())
	}
}

// TestSplitterAliasing checks that a returned record stays intact until the
// next call, while the Splitter reuses its two buffers.
func TestSplitterAliasing(t *testing.T) {
	s := NewSplitter()
	s.Push([]byte(h1))
	r := s.Push([]byte(h2))
	if r == nil || string(r.First) != h1 {
		t.Fatalf("want %q, got %v", h1, r)
	}
	r = s.Push([]byte(h1))
	if r == nil || string(r.First) != h2 {
		t.Fatalf("want %q, got %q", h2, r.First)
	}
}

// TestSplitterSourcesBounded: the number of compose sources kept apart is
// bounded; the lines of further sources share the unprefixed record, as
// before sources were told apart, and nothing is lost.
func TestSplitterSourcesBounded(t *testing.T) {
	var in []string
	for i := range maxSources + 4 {
		in = append(in, "svc-"+strconv.Itoa(i)+" | "+h1)
	}
	got, malformed := split(t, in...)
	if len(got) != maxSources+4 || malformed != 0 {
		t.Errorf("want %d records and 0 malformed, got %d and %d", maxSources+4, len(got), malformed)
	}
}
