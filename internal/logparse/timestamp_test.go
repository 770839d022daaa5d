package logparse

import (
	"strconv"
	"testing"
	"time"
)

func TestTimestamps(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	const hw = "DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[0:1]) to (offset=2, segment=[0:2]) (kafka.cluster.Partition)"
	const hwSpring = "DEBUG 4242 --- [main] kafka.cluster.Partition                  : [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[0:1]) to (offset=2, segment=[0:2])"
	for _, tc := range []struct {
		name string
		loc  *time.Location
		line string
		want time.Time
	}{
		{"broker time in UTC", time.UTC, "[2025-10-16 15:57:12,614] " + hw, time.Date(2025, 10, 16, 15, 57, 12, 614e6, time.UTC)},
		{"broker time is local time of --log.timezone", berlin, "[2025-10-16 15:57:12,614] " + hw, time.Date(2025, 10, 16, 13, 57, 12, 614e6, time.UTC)},
		{"DST: last minute of summer time", berlin, "[2025-10-26 01:59:59,999] " + hw, time.Date(2025, 10, 25, 23, 59, 59, 999e6, time.UTC)},
		{"strimzi", time.UTC, "2024-03-02 11:04:10,311 " + hw + " [t]", time.Date(2024, 3, 2, 11, 4, 10, 311e6, time.UTC)},
		{"spring Z ignores --log.timezone", berlin, "2025-02-03T08:15:00.123Z " + hwSpring, time.Date(2025, 2, 3, 8, 15, 0, 123e6, time.UTC)},
		{"spring offset", time.UTC, "2025-02-03T08:15:00.123+01:00 " + hwSpring, time.Date(2025, 2, 3, 7, 15, 0, 123e6, time.UTC)},
		{"spring negative offset, nanoseconds", time.UTC, "2025-02-03T08:15:00.123456789-0530 " + hwSpring, time.Date(2025, 2, 3, 13, 45, 0, 123456789, time.UTC)},
		{"spring without zone", berlin, "2025-02-03T08:15:00.123 " + hwSpring, time.Date(2025, 2, 3, 7, 15, 0, 123e6, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := NewParser(tc.loc).parseLine([]byte(tc.line))
			if !ok {
				t.Fatal("want an event, got not ours")
			}
			if !tc.want.Equal(ev.Time) {
				t.Errorf("want %s, got %s", tc.want, ev.Time.UTC())
			}
		})
	}
}

// TestTimestampCache checks that the per-minute cache never leaks a minute
// into the next line's time.
func TestTimestampCache(t *testing.T) {
	var c tsCache
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2025-10-16 15:57:12,614", time.Date(2025, 10, 16, 15, 57, 12, 614e6, time.UTC)},
		{"2025-10-16 15:57:59,999", time.Date(2025, 10, 16, 15, 57, 59, 999e6, time.UTC)},
		{"2025-10-16 15:58:00,000", time.Date(2025, 10, 16, 15, 58, 0, 0, time.UTC)},
		{"2025-10-17 15:58:00,001", time.Date(2025, 10, 17, 15, 58, 0, 1e6, time.UTC)},
	} {
		got, ok := c.brokerTime([]byte(tc.in), time.UTC)
		if !ok || !tc.want.Equal(got) {
			t.Errorf("%s: want %s, got %s (ok=%v)", tc.in, tc.want, got, ok)
		}
	}
	for _, bad := range []string{"2025-13-16 15:57:12,614", "2025-10-16 25:57:12,614", "2025-10-16 15:57:62,614", "20x5-10-16 15:57:12,614", "2025-10"} {
		if _, ok := c.brokerTime([]byte(bad), time.UTC); ok {
			t.Errorf("%s: want rejected", bad)
		}
	}
}

// TestTimestampCacheRepresentation: a cached time is the very value
// time.Date gives (same instant, same Location), not just an equal instant:
// JSON output and Format print the location.
func TestTimestampCacheRepresentation(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	for _, loc := range []*time.Location{time.UTC, time.Local, berlin} {
		var c tsCache
		for _, ms := range []int{614, 615, 615, 999} {
			in := "2025-10-26 01:59:59," + strconv.Itoa(ms)
			got, ok := c.brokerTime([]byte(in), loc)
			want := time.Date(2025, 10, 26, 1, 59, 59, ms*1e6, loc)
			if !ok || got != want {
				t.Errorf("%s in %s: got %#v, want %#v", in, loc, got, want)
			}
		}
	}
}
