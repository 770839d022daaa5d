package dashboards

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// repoRoot is the repository root as seen from this package's directory.
const repoRoot = ".."

func TestGeneratedFilesUpToDate(t *testing.T) {
	files, err := Generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Errorf("%v (run: cd dashboards && go generate ./...)", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; run: cd dashboards && go generate ./...", name)
		}
	}
}

func TestPrometheusRuleKeepsComments(t *testing.T) {
	rules := []byte("# header\n\ngroups:\n  - name: g\n    rules:\n      # why\n      - alert: A\n        expr: |\n          up\n\n          == 0\n")
	got, err := PrometheusRule(rules)
	if err != nil {
		t.Fatal(err)
	}
	want := prometheusRuleHeader + "  groups:\n    - name: g\n      rules:\n        # why\n        - alert: A\n          expr: |\n            up\n\n            == 0\n"
	if string(got) != want {
		t.Errorf("PrometheusRule:\n%s\nwant:\n%s", got, want)
	}
	if _, err := PrometheusRule([]byte("rules: []\n")); err == nil {
		t.Error("PrometheusRule accepted a file without groups")
	}
}
