// Package genlog writes a synthetic Kafka broker log (server.log, log4j
// layout "[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)") with a known mix
// of replication lines, and returns exactly what a reader must find in it: the
// events per type and what each invariant concludes. Tests and benchmarks use
// it instead of a broker; the same seed gives the same bytes.
package genlog

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/invariant"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// Options shape a generated log.
type Options struct {
	Lines      int    // physical lines to write; the last block may add a few more
	Partitions int    // partitions the broker leads; 0 means 12
	Seed       uint64 // the same seed gives the same log
	Violations int    // injected violations of each kind (HW regression, partition epoch regression, produce rejected with enough ISR)
	Broker     int32  // the broker's id, 1 to 3; 0 means 1. The two others are its followers.
}

// Manifest is what the log holds, exactly.
type Manifest struct {
	Lines   int64 `json:"lines"`   // physical lines
	Records int64 `json:"records"` // log4j records: header lines (a continuation joins its header)
	// Events per logparse event type name ("hw_update"), every type listed.
	Events map[string]int64 `json:"events"`
	// What logparse's Checker concludes per invariant name ("hw_monotonic"),
	// every invariant listed.
	Invariants map[string]Expect `json:"invariants"`
}

// Expect is one invariant's expected outcome.
type Expect struct {
	Checked    int64 `json:"checked"`
	Violations int64 `json:"violations"`
}

// topics mix the legal characters of topic names and an internal topic.
var topics = []string{"performance-test", "orders.v1", "__consumer_offsets", "payments_eu-west"}

// partition is what the generator knows of one partition it leads.
type partition struct {
	topic, topicID string
	index          int32
	hw, seg, pos   int64   // high watermark and its segment position
	version        int64   // partition epoch
	leaderEpoch    int64   // leader epoch
	isr            []int32 // committed ISR, the leader first
	checkedEpoch   int64   // the last partition epoch a line told the checker; -1 = none
}

// generator writes one log.
type generator struct {
	w         *bufio.Writer
	rng       *rand.Rand
	t         time.Time
	broker    int32
	followers [2]int32
	parts     []*partition
	buf       []byte
	m         Manifest
	events    [256]int64
	inv       map[invariant.Invariant]*Expect
}

// violation kinds, injected in turn.
const (
	injectHW = iota
	injectEpoch
	injectMinISR
	numInjections
)

// Write writes a log shaped by o to w and returns its manifest.
func Write(w io.Writer, o Options) (Manifest, error) {
	if o.Partitions <= 0 {
		o.Partitions = 12
	}
	if o.Broker < 1 || o.Broker > 3 {
		o.Broker = 1
	}
	g := &generator{
		w:      bufio.NewWriterSize(w, 1<<16),
		rng:    rand.New(rand.NewPCG(o.Seed, 0x6b61666b61)),
		t:      time.Date(2025, 10, 16, 15, 57, 12, 612e6, time.UTC),
		broker: o.Broker,
		inv:    make(map[invariant.Invariant]*Expect),
	}
	for _, inv := range invariant.Invariants() {
		g.inv[inv] = &Expect{}
	}
	n := 0
	for b := int32(1); b <= 3; b++ {
		if b != o.Broker {
			g.followers[n] = b
			n++
		}
	}
	for i := range o.Partitions {
		t := i % len(topics)
		g.parts = append(g.parts, &partition{
			topic:        topics[t],
			topicID:      fmt.Sprintf("GenlogTopicId%09d", t),
			index:        int32(i),
			hw:           1000 + g.rng.Int64N(9000),
			seg:          1 + g.rng.Int64N(30),
			pos:          g.rng.Int64N(1_000_000),
			version:      1 + g.rng.Int64N(20),
			leaderEpoch:  g.rng.Int64N(10),
			isr:          []int32{o.Broker, g.followers[0], g.followers[1]},
			checkedEpoch: -1,
		})
	}
	// Where the violations go: away from the start and the end of the log.
	margin := min(1000, o.Lines/4)
	var slots []int
	for range o.Violations * numInjections {
		slots = append(slots, margin+g.rng.IntN(max(1, o.Lines-2*margin)))
	}
	slices.Sort(slots)
	injected := 0
	for int(g.m.Lines) < o.Lines {
		p := g.parts[g.rng.IntN(len(g.parts))]
		if injected < len(slots) && int(g.m.Lines) >= slots[injected] {
			g.inject(p, injected%numInjections)
			injected++
			continue
		}
		switch r := g.rng.Float64(); {
		case r < 0.74:
			g.produceBatch(p)
		case r < 0.78:
			// A follower falls out of the ISR now and then and is back soon:
			// most batches are acknowledged by both followers.
			if len(p.isr) < 3 || g.rng.IntN(10) == 0 {
				g.isrChange(p)
			} else {
				g.produceBatch(p)
			}
		case r < 0.79:
			g.rejected(p, 1, []int32{g.broker})
		case r < 0.80:
			g.line(&hwBlocked, p.topic, p.index, g.broker, g.broker)
			g.check(invariant.HWStallUnderMinISR, false)
		case r < 0.81:
			g.leadershipBounce(p)
		case r < 0.90:
			g.line(&noiseCoordinator, g.broker, g.rng.IntN(50))
		case r < 0.96:
			g.line(&noiseNoCheckpoint, p.topic, p.index, g.broker, p.topic, p.index)
		default:
			g.line(&noiseNewPartition, g.broker, p.topic, p.index, p.topicID)
		}
	}
	if err := g.w.Flush(); err != nil {
		return Manifest{}, err
	}
	g.m.Events = make(map[string]int64)
	for _, t := range logparse.Types() {
		g.m.Events[t.String()] = g.events[t]
	}
	g.m.Invariants = make(map[string]Expect)
	for inv, e := range g.inv {
		g.m.Invariants[inv.String()] = *e
	}
	return g.m, nil
}

// line writes one header line of format f and counts it.
func (g *generator) line(f *format, args ...any) {
	g.t = g.t.Add(time.Duration(g.rng.IntN(4)) * time.Millisecond)
	g.buf = append(g.buf[:0], '[')
	g.buf = g.t.AppendFormat(g.buf, "2006-01-02 15:04:05,000")
	g.buf = append(g.buf, "] "...)
	g.buf = append(g.buf, f.level...)
	g.buf = append(g.buf, ' ')
	g.buf = fmt.Appendf(g.buf, f.msg, args...)
	g.buf = append(g.buf, " ("...)
	g.buf = append(g.buf, f.logger...)
	g.buf = append(g.buf, ")\n"...)
	_, _ = g.w.Write(g.buf) // a bufio.Writer keeps its first error; Write gets it from Flush
	g.m.Lines++
	g.m.Records++
	g.events[f.event]++
}

// continuation writes a line that belongs to the record before it.
func (g *generator) continuation(layout string, args ...any) {
	g.buf = fmt.Appendf(g.buf[:0], layout, args...)
	g.buf = append(g.buf, '\n')
	_, _ = g.w.Write(g.buf) // as in line: the error comes back from Flush
	g.m.Lines++
}

func (g *generator) check(inv invariant.Invariant, violated bool) {
	e := g.inv[inv]
	e.Checked++
	if violated {
		e.Violations++
	}
}

// produceBatch is one produce on the leader, acknowledged by the followers
// in the ISR, as a TRACE-level broker logs it: the HW first held back, the
// acks awaited, the followers' fetches recorded, then the HW advanced.
func (g *generator) produceBatch(p *partition) {
	old, next := p.hw, p.hw+1+g.rng.Int64N(3)
	followers := p.isr[1:]
	var leos, awaiting, acked strings.Builder
	for i, f := range followers {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		fmt.Fprintf(&leos, "replica %d: (offset=%d, segment=[%d:%d]), ", f, old, p.seg, p.pos)
		fmt.Fprintf(&awaiting, "%sbroker %d: %d", sep, f, old)
		fmt.Fprintf(&acked, "broker %d: %d, ", f, next)
	}
	fmt.Fprintf(&leos, "replica %d: (offset=%d, segment=[%d:%d])", g.broker, next, p.seg, p.pos)
	fmt.Fprintf(&acked, "broker %d: %d", g.broker, next)
	g.line(&hwSkip, p.topic, p.index, g.broker, old, p.seg, p.pos, leos.String())
	g.line(&ackProgress, p.topic, p.index, g.broker, next, fmt.Sprintf("broker %d: %d", g.broker, next), awaiting.String())
	for _, f := range followers {
		g.line(&replicaLEO, p.topic, p.index, g.broker, f, next)
	}
	oldPos := p.pos
	p.pos += (900 + g.rng.Int64N(300)) * (next - old)
	g.line(&hwUpdate, p.topic, p.index, g.broker, old, p.seg, oldPos, next, p.seg, p.pos)
	g.check(invariant.HWMonotonic, false)
	p.hw = next
	g.line(&ackProgress, p.topic, p.index, g.broker, next, acked.String(), "")
	g.check(invariant.ISRAcksComplete, false)
}

// isrChange shrinks a full ISR by a follower that fell behind, or expands a
// shrunk one again; either commits a new partition epoch.
func (g *generator) isrChange(p *partition) {
	from := joinIDs(p.isr, ",")
	if len(p.isr) == 3 {
		out := p.isr[2]
		p.isr = p.isr[:2]
		g.line(&isrShrink, p.topic, p.index, g.broker, from, joinIDs(p.isr, ","), p.hw, p.hw+5, out, p.hw-5, 1760600000000+g.t.UnixMilli()%1e6)
		p.version++
		g.isrUpdated(p, p.version)
		return
	}
	in := g.followers[0]
	if p.isr[1] == in {
		in = g.followers[1]
	}
	brokers := fmt.Sprintf("BrokerState(brokerId=%d, brokerEpoch=111), BrokerState(brokerId=%d, brokerEpoch=137), "+
		"BrokerState(brokerId=%d, brokerEpoch=204)", p.isr[0], p.isr[1], in)
	committed := joinIDs(p.isr, ", ")
	g.line(&submitExpand, p.topic, p.index, g.broker, in, g.broker, p.leaderEpoch, brokers, p.version, committed)
	p.isr = append(p.isr, in)
	g.line(&isrExpand, p.topic, p.index, g.broker, in, g.broker, p.leaderEpoch, brokers, p.version, committed, joinIDs(p.isr, ", "))
	p.version++ // committed by the controller; no line names the new epoch
}

// isrUpdated writes the leader's "ISR updated" line with a given version.
func (g *generator) isrUpdated(p *partition, version int64) {
	g.line(&isrUpdate, p.topic, p.index, g.broker, joinIDs(p.isr, ","), version)
	g.check(invariant.ISRChangeVersioned, false)
	g.check(invariant.PartitionEpochMonotonic, p.checkedEpoch >= 0 && version <= p.checkedEpoch)
	p.checkedEpoch = version
}

// rejected is a produce rejected for min ISR (2) with the ISR the leader had.
func (g *generator) rejected(p *partition, isrSize int, live []int32) {
	g.line(&produceRejected, g.broker, p.topicID, p.topic, p.index)
	g.continuation(notEnoughReplicas, isrSize, 2, p.topic, p.index, joinIDs(live, ", "))
	g.check(invariant.MinISREnforced, isrSize >= 2)
}

// leadershipBounce: the broker loses the leadership, truncates to its HW as
// a follower (not below it: no committed data lost) and is elected again.
func (g *generator) leadershipBounce(p *partition) {
	leader := p.isr[1]
	p.leaderEpoch++
	p.version++
	g.line(&followerStart, g.broker, p.topic, p.index, p.leaderEpoch, p.hw, p.version, p.hw, leader, g.broker, p.leaderEpoch-1)
	p.checkedEpoch = max(p.checkedEpoch, p.version)
	g.line(&fetcherTruncation, g.broker, leader, p.topic, p.index, p.hw, p.hw)
	g.check(invariant.NoTruncationBelowHW, false)
	g.line(&logTruncation, p.topic, p.index, p.hw)
	g.check(invariant.NoTruncationBelowHW, false)
	p.leaderEpoch++
	p.version++
	g.line(&leaderStart, g.broker, p.topic, p.index, p.topicID, p.leaderEpoch, p.hw, p.version, p.hw, joinIDs(p.isr, ","), leader, p.leaderEpoch-1)
	p.checkedEpoch = max(p.checkedEpoch, p.version)
}

// inject writes one violation of the given kind.
func (g *generator) inject(p *partition, kind int) {
	switch kind {
	case injectHW:
		lower := max(0, p.hw-1-g.rng.Int64N(50))
		g.line(&hwUpdate, p.topic, p.index, g.broker, p.hw, p.seg, p.pos, lower, p.seg, p.pos)
		g.check(invariant.HWMonotonic, true)
		p.hw = lower
	case injectEpoch:
		if p.checkedEpoch < 0 {
			p.version++
			g.isrUpdated(p, p.version)
		}
		g.isrUpdated(p, max(0, p.checkedEpoch-1)) // an epoch already seen: fencing failed
	case injectMinISR:
		g.rejected(p, 2, []int32{g.broker, g.followers[0]})
	}
}

func joinIDs(ids []int32, sep string) string {
	var b []byte
	for i, id := range ids {
		if i > 0 {
			b = append(b, sep...)
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return string(b)
}
