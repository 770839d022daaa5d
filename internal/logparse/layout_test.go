package logparse

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The same broker lines written in the layouts a deployment may configure
// instead of Kafka's own: each must yield the events the default layout
// yields, with their times (the golden files pin the rest).
func TestLayoutsYieldTheDefaultLayoutsEvents(t *testing.T) {
	want := []string{"isr_shrink", "isr_update", "hw_update", "produce_rejected_min_isr", "log_truncation", "follower_start"}
	for _, tc := range []struct {
		file  string
		extra []string
	}{
		{"layout-thread", nil},                // [%d] %-5p [%t] %m (%c)
		{"layout-ttcc", nil},                  // %d [%t] %-5p %c - %m
		{"layout-iso", []string{"hw_update"}}, // ISO-8601 with T and a zone, abbreviated logger; log4j2 Strimzi
		{"layout-ansi", nil},                  // ANSI color codes
		{"layout-ecs-json", nil},              // log4j2 EcsLayout (JsonTemplateLayout and ecs-logging-java)
	} {
		t.Run(tc.file, func(t *testing.T) {
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(parseFile(t, "testdata/"+tc.file+".log"))), "\n") {
				var ev struct {
					Type string `json:"type"`
					Time string `json:"time"`
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					continue
				}
				if ev.Time == "" {
					t.Errorf("event without a time: %s", l)
				}
				got = append(got, ev.Type)
			}
			if w := append(slices.Clone(want), tc.extra...); !slices.Equal(got, w) {
				t.Errorf("want events %v, got %v", w, got)
			}
		})
	}
}
