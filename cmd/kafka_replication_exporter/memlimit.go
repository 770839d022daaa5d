package main

import (
	"errors"
	"log/slog"
	"math"
	"os"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// setMemoryLimit sets the Go runtime's soft memory limit to ratio of the
// container's memory limit (cgroup v1 or v2: Kubernetes limits.memory,
// docker --memory, systemd MemoryMax), as Prometheus 3 does by default: a
// refresh and a scrape that overlap would otherwise let the heap grow to
// twice what they hold, past the limit (docs/benchmarks.md, "Consumer
// groups at 100k partitions"). GOMEMLIMIT or AUTOMEMLIMIT in the
// environment take precedence, as the library documents; without a limit
// nothing changes.
func setMemoryLimit(ratio float64, logger *slog.Logger) {
	applyMemoryLimit(ratio, containerLimit, logger)
}

// containerLimit is the cgroup's memory limit; a system without cgroups
// has none, which is no error.
func containerLimit() (uint64, error) {
	limit, err := memlimit.FromCgroup()
	if errors.Is(err, memlimit.ErrCgroupsNotSupported) {
		return 0, memlimit.ErrNoLimit
	}
	return limit, err
}

func applyMemoryLimit(ratio float64, provider memlimit.Provider, logger *slog.Logger) {
	limit, err := memlimit.Set(memlimit.WithRatio(ratio), memlimit.WithProvider(provider))
	switch {
	case err != nil:
		logger.Warn("Cannot read the container's memory limit: the Go runtime has no soft memory limit (set GOMEMLIMIT to give it one)", "err", err)
	case os.Getenv("GOMEMLIMIT") != "" || os.Getenv("AUTOMEMLIMIT") == "off":
		logger.Info("Go soft memory limit from the environment", "GOMEMLIMIT", os.Getenv("GOMEMLIMIT"), "AUTOMEMLIMIT", os.Getenv("AUTOMEMLIMIT"))
	case limit != math.MaxInt64:
		logger.Info("Go soft memory limit set from the container's memory limit", "bytes", limit)
	}
}
