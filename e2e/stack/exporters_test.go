package stack

import (
	"slices"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
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

// A dedicated controller's sidecar is log-only, as docs/scope.md runs it:
// no admin API, no broker id, and the two files a controller writes to.
func TestControllerArgs(t *testing.T) {
	n := &harness.Node{ID: 101, Role: harness.RoleController, LogDir: "/logs", ControllerAddr: "127.0.0.1:9101"}
	want := []string{"--log.file=/logs/server.log", "--log.file=/logs/controller.log", "--log.poll-interval=250ms"}
	if got := controllerArgs(n); !slices.Equal(got, want) {
		t.Errorf("controllerArgs = %q\nwant %q", got, want)
	}
}
