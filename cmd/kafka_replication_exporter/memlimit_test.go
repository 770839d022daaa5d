package main

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestMemoryLimitFromContainer: the soft limit is the ratio of the
// container's limit; no limit, or no cgroups, changes nothing quietly; a
// limit that cannot be read is a WARN; GOMEMLIMIT in the environment wins.
func TestMemoryLimitFromContainer(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("AUTOMEMLIMIT", "")
	os.Unsetenv("AUTOMEMLIMIT") // restored by Setenv's cleanup
	for name, tc := range map[string]struct {
		provider memlimit.Provider
		env      string
		want     int64
		log      string
	}{
		"container limit": {provider: memlimit.Limit(1000 << 20), want: 900 << 20, log: "level=INFO msg=\"Go soft memory limit set from the container's memory limit\" bytes=943718400"},
		"no limit":        {provider: func() (uint64, error) { return 0, memlimit.ErrNoLimit }, want: math.MaxInt64},
		"unreadable":      {provider: func() (uint64, error) { return 0, errors.New("bad cgroup file") }, want: math.MaxInt64, log: "level=WARN msg=\"Cannot read the container's memory limit"},
		"environment":     {provider: memlimit.Limit(1000 << 20), env: "200MiB", want: math.MaxInt64, log: "level=INFO msg=\"Go soft memory limit from the environment\" GOMEMLIMIT=200MiB"},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		t.Setenv("GOMEMLIMIT", tc.env)
		var logs bytes.Buffer
		applyMemoryLimit(0.9, tc.provider, slog.New(slog.NewTextHandler(&logs, nil)))
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%s: want the soft limit %d, got %d", name, tc.want, got)
		}
		if tc.log == "" && logs.Len() > 0 || !strings.Contains(logs.String(), tc.log) {
			t.Errorf("%s: want the log %q, got %q", name, tc.log, logs.String())
		}
	}
	// Without cgroups (not Linux) there is no limit to read, which is no error.
	if _, err := containerLimit(); err != nil && !errors.Is(err, memlimit.ErrNoLimit) {
		t.Logf("this machine's cgroup limit: %v", err)
	}
}

func TestBadMemoryLimitRatioExitsTwo(t *testing.T) {
	for _, ratio := range []string{"0", "1.5", "-1", "NaN"} {
		code, _, errOut := runCLI(t, "", "serve", "--log.file="+filepath.Join(t.TempDir(), "server.log"),
			"--web.listen-address=127.0.0.1:0", "--auto-gomemlimit.ratio="+ratio)
		if code != exitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "--auto-gomemlimit.ratio") {
			t.Errorf("ratio %s: want exit 2 with one line naming the flag, got %d %q", ratio, code, errOut)
		}
	}
}
