// Package dashboards generates the Grafana dashboards of
// kafka_replication_exporter with the Grafana Foundation SDK, and the
// prometheus-operator wrapper of the alert rules. It is its own Go module so
// the SDK and the Prometheus libraries its tests use stay out of the
// exporter's go.mod.
//
// The generated files are committed; TestGeneratedFilesUpToDate fails when
// they differ from what the code generates. Regenerate with:
//
//	cd dashboards && go generate ./...
package dashboards

//go:generate go run ./cmd/gen -root ..

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Dashboards maps repository-relative file names to dashboard builders.
var Dashboards = map[string]func() *dashboard.DashboardBuilder{
	"dashboards/kafka-replication-overview.json": Overview,
	"dashboards/kafka-replication-topic.json":    Topic,
}

// Generate returns every generated file, keyed by its repository-relative
// path. root is the repository root; the rule file is read from there.
func Generate(root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for name, build := range Dashboards {
		d, err := build().Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files[name] = append(out, '\n')
	}
	rules, err := os.ReadFile(filepath.Join(root, RulesFile))
	if err != nil {
		return nil, err
	}
	if files[PrometheusRuleFile], err = PrometheusRule(rules); err != nil {
		return nil, err
	}
	return files, nil
}
