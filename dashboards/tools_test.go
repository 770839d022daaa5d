package dashboards

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const installHint = ".ci/install-prometheus-tools.sh"

// optionalTools may be missing even in CI: the install script builds pint
// only when it can.
var optionalTools = map[string]bool{"pint": true}

// tool returns the pinned binary from the cache the install script fills. In
// CI (CI=true) a missing tool fails the test: a skipped rule test looks like
// a passing one. Locally it skips, with the command that installs it.
func tool(t *testing.T, name string) string {
	t.Helper()
	cache := os.Getenv("KRE_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(home, ".cache", "kafka_replication_exporter")
	}
	path := filepath.Join(cache, "bin", name)
	if _, err := os.Stat(path); err != nil {
		msg := name + " is not installed in " + filepath.Dir(path) + "; run: " + installHint
		if os.Getenv("CI") == "true" && !optionalTools[name] {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// run executes a tool from the repository root and fails with its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool(t, name), args...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestPromtoolCheckRules(t *testing.T) {
	run(t, "promtool", "check", "rules", "--lint=all", "--lint-fatal", RulesFile)
}

func TestPromtoolTestRules(t *testing.T) {
	tests, err := filepath.Glob(filepath.Join(repoRoot, "alerts/tests/*.yml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no alerts/tests/*.yml (%v)", err)
	}
	args := []string{"test", "rules"}
	for _, f := range tests {
		args = append(args, strings.TrimPrefix(f, repoRoot+"/"))
	}
	t.Log(run(t, "promtool", args...))
}

func TestAlertmanagerConfig(t *testing.T) {
	const config = "deploy/alertmanager.yml"
	run(t, "amtool", "check-config", config)
	for labels, receiver := range map[string]string{
		"severity=critical": "kafka-pager",
		"severity=warning":  "kafka-ticket",
		"severity=info":     "kafka-default",
	} {
		out := run(t, "amtool", "config", "routes", "test", "--config.file="+config, labels)
		if strings.TrimSpace(out) != receiver {
			t.Errorf("%s routes to %q, want %q", labels, strings.TrimSpace(out), receiver)
		}
	}
}

func TestPintLint(t *testing.T) {
	// --fail-on=warning: pint's default exit code ignores everything below bug.
	run(t, "pint", "--no-color", "--offline", "--config", "alerts/.pint.hcl",
		"lint", "--min-severity=info", "--fail-on=warning", RulesFile)
}

// TestPromtoolCheckMetrics lints the golden scrape as Prometheus' own tool
// does: names, HELP, TYPE and units of every family the exporter writes.
func TestPromtoolCheckMetrics(t *testing.T) {
	const golden = "internal/metrics/fixtures/e2e-output.txt"
	in, err := os.Open(filepath.Join(repoRoot, golden))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(tool(t, "promtool"), "check", "metrics")
	cmd.Dir, cmd.Stdin = repoRoot, in
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics < %s: %v\n%s", golden, err, out)
	}
}
