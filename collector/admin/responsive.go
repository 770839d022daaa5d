package admin

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// brokerAnswers records, per broker id, whether every request of this
// refresh sent to that broker was answered in time.
type brokerAnswers struct {
	mu   sync.Mutex
	byID map[int32]bool
}

func (b *brokerAnswers) record(id int32, answered bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev, seen := b.byID[id]
	b.byID[id] = answered && (prev || !seen)
}

func (b *brokerAnswers) list() []BrokerStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BrokerStatus, 0, len(b.byID))
	for id, ok := range b.byID {
		out = append(out, BrokerStatus{ID: id, Responsive: ok})
	}
	slices.SortFunc(out, func(x, y BrokerStatus) int { return cmp.Compare(x.ID, y.ID) })
	return out
}

// unresponsive reports whether the last refresh asked broker id something
// that it did not answer in time.
func (a *Poller) unresponsive(id int32) bool {
	for _, b := range a.snap.Load().Brokers {
		if b.ID == id {
			return !b.Responsive
		}
	}
	return false
}

// brokerAt returns the id of the broker advertised at addr, if known.
func (a *Poller) brokerAt(addr string) (int32, bool) {
	for id, advertised := range a.brokers {
		if strings.EqualFold(advertised, addr) {
			return id, true
		}
	}
	return -1, false
}
