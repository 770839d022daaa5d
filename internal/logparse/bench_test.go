package logparse

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var (
	benchHW       = []byte("[2025-10-16 15:57:12,614] DEBUG [Partition performance-test-2 broker=1] High watermark updated from (offset=88, segment=[16:76938]) to (offset=89, segment=[16:78032]) (kafka.cluster.Partition)")
	benchNotOurs  = []byte("[2025-10-15 20:36:54,507] INFO [GroupCoordinator id=1] Scheduling unloading of metadata for __consumer_offsets-13 with epoch OptionalInt[5] (org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime)")
	benchAck      = []byte("[2025-10-16 15:57:12,612] TRACE [Partition performance-test-2 broker=1] Progress awaiting ISR acks for offset 89: acked: Set(broker 1: 89), awaiting Set(broker 3: 88, broker 2: 88) (kafka.cluster.Partition)")
	benchSkip     = []byte("[2025-10-16 15:57:12,612] TRACE [Partition performance-test-2 broker=1] Skipping update high watermark since new hw (offset=88, segment=[16:76938]) is not larger than old value. All current LEOs are Set(replica 2: (offset=88, segment=[16:76938]), replica 3: (offset=88, segment=[16:76938]), replica 1: (offset=89, segment=[16:78032])) (kafka.cluster.Partition)")
	benchLEO      = []byte("[2025-10-16 15:57:12,613] DEBUG [Partition performance-test-2 broker=1] Recorded replica 2 log end offset (LEO) position 89 and log start offset 0. (kafka.cluster.Partition)")
	benchFetchReq = []byte("[2025-10-16 15:57:12,613] TRACE [KafkaApi-1] Handling request:RequestHeader(apiKey=FETCH, apiVersion=17, clientId=broker-2-fetcher-0, correlationId=4711, headerVersion=2) from connection 127.0.0.1:9092-127.0.0.1:53412-0 (kafka.server.KafkaApis)")
)

// benchHWLines are HW lines a millisecond apart: the parser caches the last
// timestamp, and a benchmark that repeats one line would measure only the hit.
var benchHWLines = func() (ls [8][]byte) {
	for i := range ls {
		l := bytes.Clone(benchHW)
		l[23] = byte('0' + i) // 15:57:12,61<i>
		ls[i] = l
	}
	return ls
}()

// BenchmarkParseHWUpdate is the hot-loop API (ParseInto, as verify and serve
// call it) on hw_update lines with distinct timestamps.
func BenchmarkParseHWUpdate(b *testing.B) {
	p := NewParser(time.UTC)
	var ev Event
	var recs [8]Record
	for i, l := range benchHWLines {
		recs[i] = Record{First: l, Line: 1, Lines: 1}
	}
	b.SetBytes(int64(len(benchHW)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if !p.ParseInto(&recs[i&7], &ev) {
			b.Fatal("not parsed")
		}
		i++
	}
}

// BenchmarkParseLineHWUpdate is the convenience API: the same line, the
// 416-byte Event returned by value.
func BenchmarkParseLineHWUpdate(b *testing.B) {
	p := NewParser(time.UTC)
	b.SetBytes(int64(len(benchHW)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := p.parseLine(benchHWLines[i&7]); !ok {
			b.Fatal("not parsed")
		}
		i++
	}
}

// BenchmarkParseNotOurs is the reject path of the hot-loop API: an INFO line
// of another logger, the bulk of a busy broker's server.log.
func BenchmarkParseNotOurs(b *testing.B) {
	p := NewParser(time.UTC)
	var ev Event
	rec := Record{First: benchNotOurs, Line: 1, Lines: 1}
	b.SetBytes(int64(len(benchNotOurs)))
	b.ReportAllocs()
	for b.Loop() {
		if p.ParseInto(&rec, &ev) {
			b.Fatal("parsed")
		}
	}
}

// BenchmarkParseLineNotOurs is the same through parseLine, whose zero Event
// result alone costs more than the rejection.
func BenchmarkParseLineNotOurs(b *testing.B) {
	p := NewParser(time.UTC)
	b.SetBytes(int64(len(benchNotOurs)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := p.parseLine(benchNotOurs); ok {
			b.Fatal("parsed")
		}
	}
}

func BenchmarkParseISRAckProgress(b *testing.B) {
	p := NewParser(time.UTC)
	b.SetBytes(int64(len(benchAck)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := p.parseLine(benchAck); !ok {
			b.Fatal("not parsed")
		}
	}
}

// BenchmarkSplitterParseMixed runs a realistic TRACE-level mix (a leader
// with kafka.cluster.Partition at TRACE, plus request tracing from another
// logger and an exception) through the Splitter and the Parser, as the
// sidecar does.
func BenchmarkSplitterParseMixed(b *testing.B) {
	mix := [][]byte{
		benchAck, benchAck, benchSkip, benchLEO, benchLEO, benchAck, benchHW, benchSkip, benchFetchReq, benchFetchReq, benchNotOurs,
		[]byte("[2025-10-16 16:07:21,017] ERROR [ReplicaManager broker=1] Error processing append operation on partition AMNt6PcpRZOktSh6v-u00A:performance-test-0 (kafka.server.ReplicaManager)"),
		[]byte("org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 1 is insufficient to satisfy the min.isr requirement of 2 for partition performance-test-0, live replica(s) broker.id are : Set(1)"),
	}
	var size int64
	for _, l := range mix {
		size += int64(len(l)) + 1
	}
	s, p := NewSplitter(), NewParser(time.UTC)
	events := 0
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range mix {
			if r := s.Push(l); r != nil {
				if _, ok := p.Parse(*r); ok {
					events++
				}
			}
		}
	}
	if events == 0 {
		b.Fatal("no events")
	}
}

// The regexp baseline: the RE2 patterns a regexp parser would use, extracting the same
// fields (time, level, topic, partition, broker, from, to) with interned
// topics, so the cost ratio to the hand parser is visible side by side.
var (
	reHeader    = regexp.MustCompile(`^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*)$`)
	rePartition = regexp.MustCompile(`^\[Partition (\S+) broker=(\d+)\] (.*)$`)
	reHWUpdate  = regexp.MustCompile(`High watermark updated from \(offset=(\d+),? ?segment=\[(-?\d+):(-?\d+)\]\) to \(offset=(\d+),? ?segment=\[(-?\d+):(-?\d+)\]\)`)
)

type regexpParser struct {
	ts   tsCache
	strs map[string]string
}

func (r *regexpParser) parse(line []byte) (Event, bool) {
	h := reHeader.FindSubmatchIndex(line)
	if h == nil {
		return Event{}, false
	}
	msg := line[h[6]:h[7]]
	m := rePartition.FindSubmatchIndex(msg)
	if m == nil {
		return Event{}, false
	}
	body := msg[m[6]:m[7]]
	u := reHWUpdate.FindSubmatchIndex(body)
	if u == nil {
		return Event{}, false
	}
	ev := Event{Type: HWUpdate}
	ev.Time, _ = r.ts.brokerTime(line[h[2]:h[3]], time.UTC)
	ev.Level, _ = level(line[h[4]:h[5]])
	topic, part, _ := splitTopicPartition(msg[m[2]:m[3]])
	if s, ok := r.strs[string(topic)]; ok {
		ev.Topic = s
	} else {
		ev.Topic = string(topic)
		r.strs[ev.Topic] = ev.Topic
	}
	ev.Partition = part
	broker, _ := strconv.Atoi(string(msg[m[4]:m[5]]))
	ev.Broker = int32(broker)
	ev.From, _ = strconv.ParseInt(string(body[u[2]:u[3]]), 10, 64)
	ev.To, _ = strconv.ParseInt(string(body[u[8]:u[9]]), 10, 64)
	return ev, true
}

func BenchmarkRegexpHWUpdate(b *testing.B) {
	r := &regexpParser{strs: map[string]string{}}
	want, _ := NewParser(time.UTC).parseLine(benchHW)
	if got, ok := r.parse(benchHW); !ok || got.From != want.From || got.To != want.To || got.Topic != want.Topic || !got.Time.Equal(want.Time) {
		b.Fatalf("regexp baseline disagrees: want %+v, got %+v", want, got)
	}
	b.SetBytes(int64(len(benchHW)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := r.parse(benchHWLines[i&7]); !ok {
			b.Fatal("not parsed")
		}
		i++
	}
}

func BenchmarkRegexpNotOurs(b *testing.B) {
	r := &regexpParser{strs: map[string]string{}}
	b.SetBytes(int64(len(benchNotOurs)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.parse(benchNotOurs); ok {
			b.Fatal("parsed")
		}
	}
}

// TestParseAllocs pins the steady-state zero-allocation property the
// benchmarks report, so a regression fails `go test`, not just a reading.
func TestParseAllocs(t *testing.T) {
	p := NewParser(time.UTC)
	var buf []byte
	for _, l := range [][]byte{benchHW, benchAck, benchSkip, benchLEO, benchNotOurs} {
		p.parseLine(l) // intern the topic and logger
		allocs := testing.AllocsPerRun(100, func() {
			ev, _ := p.parseLine(l)
			buf = AppendJSON(buf[:0], &ev)
		})
		if allocs != 0 {
			t.Errorf("want 0 allocs per line, got %v for %s", allocs, bytes.TrimSpace(l[:60]))
		}
	}
}

// BenchmarkMachineByteLoop is not about the parser: a plain loop summing
// 1,000 bytes, to put the parser's ns/op in proportion when comparing
// machines: a core that retires one add per clock does it in 1,000 clocks.
// The loop is a separate function on purpose: inside a b.Loop body the
// compiler keeps the running sum in memory, and that measured the
// store-to-load latency, not the machine.
func BenchmarkMachineByteLoop(b *testing.B) {
	buf := make([]byte, 1000)
	for i := range buf {
		buf[i] = byte(i)
	}
	sum := 0
	for b.Loop() {
		sum += sumBytes(buf)
	}
	if sum == 1 {
		b.Log(sum) // keep the loop
	}
}

//go:noinline
func sumBytes(buf []byte) int {
	s := 0
	for _, c := range buf {
		s += int(c)
	}
	return s
}
