package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The binary under test is built once per test run.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func exporterBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kre-e2e-bin-*")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kafka_replication_exporter")
		cmd := exec.Command("go", "build", "-o", binPath, "../cmd/kafka_replication_exporter")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/kafka_replication_exporter: %v", buildErr)
	}
	return binPath
}

type invariant struct {
	Name       string            `json:"name"`
	Status     string            `json:"status"`
	Checked    int64             `json:"checked"`
	Violations int64             `json:"violations"`
	Examples   []json.RawMessage `json:"examples"`
	Reason     string            `json:"reason"`
}

type verifyReport struct {
	Invariants      []invariant      `json:"invariants"`
	Events          map[string]int64 `json:"events"`
	Lines           int64            `json:"lines"`
	UnparsedRecords int64            `json:"unparsed_records"`
	ExitCode        int              `json:"-"`
	Raw             string           `json:"-"`
}

func (r verifyReport) invariant(name string) invariant {
	for _, inv := range r.Invariants {
		if inv.Name == name {
			return inv
		}
	}
	return invariant{Name: name, Status: "MISSING"}
}

// failed lists the invariants that did not pass.
func (r verifyReport) failed() []string {
	var names []string
	for _, inv := range r.Invariants {
		if inv.Status == "FAILED" {
			names = append(names, inv.Name)
		}
	}
	return names
}

// verify runs `kafka_replication_exporter verify --format=json` on the files,
// in the given order (one sequence).
func verify(t *testing.T, files ...string) verifyReport {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("verify: no files")
	}
	cmd := exec.Command(exporterBinary(t), append([]string{"verify", "--format=json"}, files...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r verifyReport
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.ExitCode = exit.ExitCode()
	default:
		t.Fatalf("verify: %v", err)
	}
	if r.ExitCode == 2 {
		t.Fatalf("verify usage/I/O error: %s", stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("verify output is not the JSON report: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	r.Raw = stdout.String()
	return r
}

// event is one line of `kafka_replication_exporter events`.
type event map[string]any

func (e event) str(k string) string  { s, _ := e[k].(string); return s }
func (e event) num(k string) float64 { f, _ := e[k].(float64); return f }
func (e event) list(k string) []any  { l, _ := e[k].([]any); return l }

// events runs `kafka_replication_exporter events` on the files.
func events(t *testing.T, files ...string) []event {
	t.Helper()
	cmd := exec.Command(exporterBinary(t), append([]string{"events"}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("events: %v\n%s", err, stderr.String())
	}
	var evs []event
	s := bufio.NewScanner(bytes.NewReader(out))
	s.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for s.Scan() {
		if strings.TrimSpace(s.Text()) == "" {
			continue
		}
		var e event
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			t.Fatalf("events: bad JSON line %q: %v", s.Text(), err)
		}
		evs = append(evs, e)
	}
	return evs
}

// ofType filters events by type name (and by topic when topic != "").
func ofType(evs []event, typ, topic string) []event {
	var out []event
	for _, e := range evs {
		if e.str("type") == typ && (topic == "" || e.str("topic") == topic) {
			out = append(out, e)
		}
	}
	return out
}
