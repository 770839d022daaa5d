package collector

import (
	"slices"
	"strings"
	"sync"
)

// The direct text path of LogCollector (see exposition.go): its
// per-partition (or per-topic) families.

// Families of logText.render, after the counters (0 … numCounters-1).
const (
	lfLogHW = numCounters + iota
	lfISR
	lfEpoch
	numLogFamilies
)

// logRow is what a scrape reads of one partition (or, rolled up, one topic).
type logRow struct {
	counters        partitionCounters
	topic           string
	partition       string // formatted; "" when rolled up
	hw, isr, epoch  int64
	hasHW           bool
	hasISR, isEpoch bool // leader-only gauges
}

// add sums a partition into a per-topic rollup row: counters and HW; the
// leader-only gauges have no meaningful sum.
func (r *logRow) add(p *logPartition) {
	for j := range p.counters {
		r.counters[j] += p.counters[j]
	}
	if p.hasHW {
		r.hw += p.hw
		r.hasHW = true
	}
}

// logText is one scrape's copy of the store, pooled between scrapes.
type logText struct {
	rows   []logRow
	order  []int32 // rows in the registry's series order
	labels labelBlocks
	topics map[string]int // rollup: topic → row
}

var logTextPool = sync.Pool{New: func() any { return &logText{topics: make(map[string]int)} }}

// textFamilies implements TextSource: the same families and series Collect
// sends, other than the event totals (SmallFamilies).
func (c *LogCollector) textFamilies(fams []directFamily) ([]directFamily, func()) {
	t := logTextPool.Get().(*logText)
	t.rows, t.order = t.rows[:0], t.order[:0]
	t.labels.reset()
	clear(t.topics)

	s := c.store
	rollup := !c.opts.PartitionLabels
	s.mu.Lock()
	t.rows = slices.Grow(t.rows, len(s.parts))
	for k, p := range s.parts {
		if rollup {
			i, ok := t.topics[k.Topic]
			if !ok {
				i = len(t.rows)
				t.topics[k.Topic] = i
				t.rows = append(t.rows, logRow{topic: k.Topic})
			}
			t.rows[i].add(p)
			continue
		}
		t.rows = append(t.rows, logRow{
			counters:  p.counters,
			topic:     k.Topic,
			partition: p.labels[0].GetValue(),
			hw:        p.hw,
			hasHW:     p.hasHW,
			isr:       int64(p.isrSize),
			hasISR:    p.leader && !p.isrAt.IsZero(),
			epoch:     p.leaderEpoch,
			isEpoch:   p.leader && p.leaderEpoch >= 0,
		})
	}
	s.mu.Unlock()

	t.order = slices.Grow(t.order, len(t.rows))
	for i := range t.rows {
		t.order = append(t.order, int32(i))
	}
	t.labels.grow(len(t.rows), 32)
	rows := t.rows
	if rollup {
		slices.SortFunc(t.order, func(a, b int32) int { return strings.Compare(rows[a].topic, rows[b].topic) })
		for _, i := range t.order {
			t.labels.add("topic", rows[i].topic)
		}
	} else {
		// Label values in label-name order, compared as strings: partition
		// ("10" < "9"), then topic.
		slices.SortFunc(t.order, func(a, b int32) int {
			if c := strings.Compare(rows[a].partition, rows[b].partition); c != 0 {
				return c
			}
			return strings.Compare(rows[a].topic, rows[b].topic)
		})
		for _, i := range t.order {
			t.labels.add("partition", rows[i].partition, "topic", rows[i].topic)
		}
	}

	n := lfLogHW + 1
	if c.opts.LeaderGauges && !rollup {
		n = numLogFamilies
	}
	for i := 0; i < n; i++ {
		fams = append(fams, directFamily{fam: c.text[i], r: t, i: i})
	}
	return fams, func() { logTextPool.Put(t) }
}

func (t *logText) render(w *textWriter, f *textFamily, fi int) {
	w.begin(f)
	for k, i := range t.order {
		r := &t.rows[i]
		switch {
		case fi < numCounters:
			w.sampleUint(f, t.labels.get(k), r.counters[fi])
		case fi == lfLogHW:
			if r.hasHW {
				w.sampleInt(f, t.labels.get(k), r.hw)
			}
		case fi == lfISR:
			if r.hasISR {
				w.sampleInt(f, t.labels.get(k), r.isr)
			}
		case fi == lfEpoch:
			if r.isEpoch {
				w.sampleInt(f, t.labels.get(k), r.epoch)
			}
		}
	}
	w.end()
}
