package logparse

import (
	"errors"
	"testing"
	"time"
)

func TestMergeByTime(t *testing.T) {
	at := func(s int) Event { return Event{Time: time.Unix(int64(s), 0), Offset: int64(s)} }
	sources := [][]Event{{at(1), at(4), at(4)}, {}, {at(0), at(4), at(9)}, {at(2)}}
	heads := make([]int, len(sources))
	var got []int64
	var from []int
	err := MergeByTime(len(sources),
		func(i int) *Event {
			if heads[i] < len(sources[i]) {
				return &sources[i][heads[i]]
			}
			return nil
		},
		func(i int) error {
			got = append(got, sources[i][heads[i]].Offset)
			from = append(from, i)
			heads[i]++
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	wantTimes, wantFrom := []int64{0, 1, 2, 4, 4, 4, 9}, []int{2, 0, 3, 0, 0, 2, 2}
	for i := range wantTimes {
		if i >= len(got) || got[i] != wantTimes[i] || from[i] != wantFrom[i] {
			t.Fatalf("want times %v from sources %v (ties to the lower source), got %v from %v", wantTimes, wantFrom, got, from)
		}
	}
	stop := errors.New("stop")
	if err := MergeByTime(1, func(int) *Event { return &sources[0][0] }, func(int) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("want pop's error, got %v", err)
	}
}
