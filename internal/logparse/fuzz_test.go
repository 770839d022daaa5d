package logparse

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// legalTopic is Kafka's rule for topic names, written independently of the
// parser's table: an event with a topic outside it could take a scrape down.
var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// FuzzParse: any record, however mangled, parses or is "not ours" — never a
// panic — and any event it yields encodes to valid JSON and names only a
// topic Kafka could have created.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in), []byte(tc.cont))
	}
	f.Add([]byte("[2025-10-16 15:57:12,614] DEBUG [Partition t-99999999999999999999 broker=1] High watermark updated from (offset=99999999999999999999"), []byte(nil))
	f.Add([]byte("[9999-99-99 99:99:99,999] INFO [Partition t-0 broker=-2147483649] Shrinking ISR from ,,, to -"), []byte("\xff\xfe"))
	f.Add([]byte("2025-02-03T08:15:00.123+99:99  INFO 1 --- [x] kafka.cluster.Partition : [Partition \xff-0 broker=0] ISR updated to "), []byte(nil))
	f.Add([]byte("[t] ERROR kafka.server.ReplicaManager - [ReplicaManager broker=1] Error processing append operation on partition :-0"),
		[]byte(notEnoughReplicas+"The size of the current ISR : x"))
	for _, form := range topicForms {
		for _, topic := range []string{"ord\xff\xfeers", "a\x00b", "a b", strings.Repeat("x", 300)} {
			f.Add([]byte(strings.ReplaceAll(form.first, "TOPIC", topic)), []byte(strings.ReplaceAll(form.cont, "TOPIC", topic)))
		}
	}
	p := NewParser(time.UTC)
	typeOnly := NewParser(time.UTC)
	typeOnly.TypeOnly = true
	f.Fuzz(func(t *testing.T, first, cont []byte) {
		// The default-layout fast path finds what the general one finds.
		if l, n := defaultHeader(first); n > 0 {
			var h header
			if !splitHeaderAny(first, &h) || h.kind != layoutDefault || h.level != l || len(h.msg) != len(first)-n {
				t.Fatalf("defaultHeader says level %v msg at %d; general path: %+v", l, n, h)
			}
		}
		rec := Record{First: first, Cont: cont, Line: 1, Lines: 1}
		ev, ok := p.Parse(rec)
		// A parser's caches (last logger, last timestamp) never change a result.
		fresh, freshOK := NewParser(time.UTC).Parse(rec)
		if ok != freshOK || ok && !reflect.DeepEqual(ev, fresh) {
			t.Fatalf("reused parser: %v %+v\nfresh parser: %v %+v", ok, ev, freshOK, fresh)
		}
		// TypeOnly changes the events counted by type only: the same event
		// with only its ident's fields (and an ack's Offset and AllAcked),
		// possibly accepted where the fields it skips are malformed.
		tev, tok := typeOnly.Parse(rec)
		if tok && (tev.Type == ISRAckProgress || tev.Type == ReplicaLEO || tev.Type == HWSkip) {
			if tev.Acked != nil || tev.Awaiting != nil || tev.Replica != -1 || tev.LEO != 0 || tev.From != 0 {
				t.Fatalf("type-only event with values: %+v", tev)
			}
			want := ev
			want.Acked, want.Awaiting, want.Replica, want.LEO, want.From = nil, nil, -1, 0, 0
			if ok && !reflect.DeepEqual(tev, want) {
				t.Fatalf("type-only %+v, full parse %+v", tev, ev)
			}
		} else if tok != ok || ok && !reflect.DeepEqual(ev, tev) {
			t.Fatalf("TypeOnly changed a %v event: %v %+v, full parse %v %+v", tev.Type, tok, tev, ok, ev)
		}
		if !ok {
			return
		}
		if ev.Type == TypeNone || ev.Type >= numTypes {
			t.Fatalf("want a real type, got %d", ev.Type)
		}
		if ev.Topic != "" && !legalTopic.MatchString(ev.Topic) {
			t.Fatalf("event %v names an illegal topic %q", ev.Type, ev.Topic)
		}
		if out := AppendJSON(nil, &ev); !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
	})
}

// FuzzSplitter: any byte stream splits into bounded records with increasing
// line numbers, and every physical line is accounted for.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte(strings.Join([]string{h1, ex, "", h2, "\tat x"}, "\n")))
	f.Add([]byte("2024-03-02T11:04:10.311Z stdout P " + h1[:40] + "\n2024-03-02T11:04:10.311Z stdout F " + h1[40:] + "\n"))
	f.Add([]byte("kafka-1 | " + h1 + "\nkafka-1 | " + ex + "\r\n\x00\x00\n"))
	f.Add([]byte("2019-04-11T12:32:24.676797004Z " + h2 + "\n" + strings.Repeat("x", 100<<10) + "\n" + h1))
	f.Add([]byte("\xff\xfe\xfd\n[\n[]\n[2025-\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, p := NewSplitter(), NewParser(time.UTC)
		lines := 0
		firstLines := make(map[int]bool)
		check := func(r *Record) {
			if len(r.First) > MaxLineBytes || len(r.Cont) > MaxContBytes {
				t.Fatalf("record over bounds: first %d, cont %d", len(r.First), len(r.Cont))
			}
			// Records of interleaved compose sources may come out of order,
			// but no line starts two records.
			if r.Line < 1 || firstLines[r.Line] || r.Lines < 1 {
				t.Fatalf("want a new line ≥ 1 and lines ≥ 1, got line %d lines %d", r.Line, r.Lines)
			}
			firstLines[r.Line] = true
			lines += r.Lines
			ev, ok := p.Parse(*r)
			if ok && !json.Valid(AppendJSON(nil, &ev)) {
				t.Fatalf("invalid JSON for %q", r.First)
			}
			if ok && ev.Topic != "" && !legalTopic.MatchString(ev.Topic) {
				t.Fatalf("event %v names an illegal topic %q", ev.Type, ev.Topic)
			}
			// The header the Splitter hands over is the one the Parser would find.
			bare, bareOK := NewParser(time.UTC).Parse(Record{First: r.First, Cont: r.Cont, Line: r.Line, Lines: r.Lines})
			if ok != bareOK || ok && !reflect.DeepEqual(ev, bare) {
				t.Fatalf("split record: %v %+v\nbare record: %v %+v", ok, ev, bareOK, bare)
			}
		}
		physical := 0
		for l := range bytes.SplitSeq(data, []byte("\n")) {
			physical++
			if r := s.Push(l); r != nil {
				check(r)
			}
		}
		for r := s.Flush(); r != nil; r = s.Flush() {
			check(r)
		}
		// Every pushed line is in at most one record, and counted malformed
		// at most once (a cut line is both kept and counted).
		if lines > physical || s.Malformed() > int64(physical) {
			t.Fatalf("accounted %d lines in records and %d malformed for %d pushed", lines, s.Malformed(), physical)
		}
	})
}

// TestParseHugeLine: a 10 MB line reaching the Parser directly (not cut by
// a Splitter) is handled without allocating.
func TestParseHugeLine(t *testing.T) {
	p := NewParser(time.UTC)
	for _, prefix := range []string{
		"[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[0:1]) to ",
		"[2025-10-16 15:57:12,614] ERROR [ReplicaManager broker=1] Error processing append operation on partition ",
		"[2025-10-16 15:57:12,614] INFO [UnifiedLog partition=",
	} {
		huge := append([]byte(prefix), bytes.Repeat([]byte("(x"), 5<<20)...)
		p.parseLine(huge)
		if allocs := testing.AllocsPerRun(2, func() { p.parseLine(huge) }); allocs != 0 {
			t.Errorf("want 0 allocs, got %v for %q…", allocs, prefix)
		}
	}
}
