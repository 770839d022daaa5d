package stack

import (
	"slices"
	"testing"
)

func TestWithOverrides(t *testing.T) {
	args := []string{"serve", "--log.file=a", "--log.file=b", "--stall.threshold=20s", "--kafka.refresh-interval=2s"}
	got := withOverrides(args, []string{"--stall.threshold=10s", "--log.file=c", "--scope=cluster"})
	want := []string{"serve", "--kafka.refresh-interval=2s", "--stall.threshold=10s", "--log.file=c", "--scope=cluster"}
	if !slices.Equal(got, want) {
		t.Errorf("withOverrides = %q\nwant %q", got, want)
	}
	if got := withOverrides(args, nil); !slices.Equal(got, args) {
		t.Errorf("no extra args changed the defaults: %q", got)
	}
}
