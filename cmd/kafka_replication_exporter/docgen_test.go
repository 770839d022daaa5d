package main

// The flags table (docs/flags.md), the metrics table (docs/metrics.md) and the
// alerts table (README.md) are rendered from the code (the kingpin application
// the binary builds, the family list, the registry's build info, the rule
// file) by the functions here, and TestReadmeTables fails when a page differs
// from what they render, so the tables cannot drift from what the binary
// really does. make docs rewrites them.

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"go.yaml.in/yaml/v2"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/metrics"
)

const (
	flagsDocPath   = "../../docs/flags.md"
	metricsDocPath = "../../docs/metrics.md"
	rulesPath      = "../../alerts/kafka-replication.rules.yml"
	alertsDocPath  = "../../alerts/README.md"
	// runbookLink is relative to alerts/README.md, where the alerts table is.
	runbookLink = "runbook.md"
)

// The package has one -update flag for all its golden files (e2e_test.go
// declares it when present); declare it here only if nobody else did, because
// a second flag.Bool("update") panics.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files (the generated docs tables) from this run")
	}
}

func updating() bool {
	return flag.Lookup("update").Value.(flag.Getter).Get().(bool)
}

// metricRow is one row of the metrics table.
type metricRow struct {
	name, typ, help string
	labels          []string
}

// familyRows are the exporter's own families, as metrics.Families()
// declares them (the partition-labeled form of those with a per-topic
// rollup), each help followed by its Doc text.
func familyRows() []metricRow {
	var rows []metricRow
	for _, f := range metrics.Families() {
		help := f.Help
		if f.Doc != "" {
			help += " " + f.Doc
		}
		switch {
		case f.Sparse:
			help += " Written only where not 0: a healthy partition has no series."
		case f.Derived:
			help += " Per-topic form only (`--no-collector.partition-labels`); per partition PromQL derives it from series with the same labels."
		}
		rows = append(rows, metricRow{name: f.Name, typ: f.Type.String(), help: help, labels: f.Labels})
	}
	return rows
}

// gatheredRows are the families of a registry, as Gather returns them, with
// the label names of their first metric.
func gatheredRows(g prometheus.Gatherer) ([]metricRow, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, err
	}
	var rows []metricRow
	for _, mf := range mfs {
		r := metricRow{name: mf.GetName(), typ: strings.ToLower(mf.GetType().String()), help: mf.GetHelp()}
		if ms := mf.GetMetric(); len(ms) > 0 {
			for _, lp := range ms[0].GetLabel() {
				r.labels = append(r.labels, lp.GetName())
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// metricsMarkdown renders the rows as a Markdown table, sorted by name.
func metricsMarkdown(rows []metricRow) string {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b metricRow) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	b.WriteString("| metric | type | labels | description |\n|---|---|---|---|\n")
	for _, r := range rows {
		labels := make([]string, len(r.labels))
		for i, l := range r.labels {
			labels[i] = "`" + l + "`"
		}
		slices.Sort(labels)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.name, r.typ, strings.Join(labels, ", "), cell(r.help))
	}
	return b.String()
}

// TestReadmeTables is the docs freshness check: the generated blocks of
// README.md, docs/flags.md and docs/metrics.md must equal what the code
// renders. With -update it rewrites them.
func TestReadmeTables(t *testing.T) {
	// The build info is the one family of the registry serve builds that is
	// not the Go or process collectors'.
	registry := prometheus.NewRegistry()
	registry.MustRegister(versioncollector.NewCollector(programName))
	built, err := gatheredRows(registry)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := alertsMarkdown(rules, runbookLink)
	if err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}
	for _, page := range []struct {
		path, block, body string
	}{
		{flagsDocPath, "FLAGS", flagsMarkdown(newApp().app)},
		{metricsDocPath, "METRICS", metricsMarkdown(append(familyRows(), built...))},
		{alertsDocPath, "ALERTS", alerts},
	} {
		checkGeneratedBlock(t, page.path, page.block, page.body)
	}
}

// checkGeneratedBlock compares the block of the page at path with body, and
// rewrites it with -update.
func checkGeneratedBlock(t *testing.T, path, block, body string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page, err := replaceBlock(string(raw), block, body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if page == string(raw) {
		return
	}
	if updating() {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the generated %s table in %s", block, path)
		return
	}
	t.Errorf("%s: the generated %s table is stale; run: make docs  (go test ./cmd/kafka_replication_exporter/ -run TestReadmeTables -update)\n%s",
		path, block, firstDifference(string(raw), page))
}

// e2eGoldenPath is the golden scrape: every metric the exporter exposes.
const e2eGoldenPath = "../../internal/metrics/fixtures/e2e-output.txt"

func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) && i < len(w); i++ {
		if h[i] != w[i] {
			return fmt.Sprintf("first difference, line %d:\n  page:      %s\n  generated: %s", i+1, h[i], w[i])
		}
	}
	return "page and generated text differ in length"
}

// flagsMarkdown renders the global flags and the flags of the serve command as
// two Markdown tables. Hidden flags (kingpin's completion helpers) are skipped.
func flagsMarkdown(app *kingpin.Application) string {
	m := app.Model()
	var b strings.Builder
	b.WriteString("Global flags (every command):\n\n")
	writeFlagTable(&b, m.Flags)
	for _, cmd := range m.Commands {
		if cmd.Name != "serve" {
			continue
		}
		b.WriteString("\n`serve` flags:\n\n")
		writeFlagTable(&b, cmd.Flags)
	}
	return b.String()
}

func writeFlagTable(b *strings.Builder, flags []*kingpin.FlagModel) {
	b.WriteString("| flag | default | description |\n|---|---|---|\n")
	for _, f := range flags {
		if f.Hidden {
			continue
		}
		// Spelled the way kingpin's --help spells them.
		name := "--" + f.Name
		if f.IsBoolFlag() {
			name = "--[no-]" + f.Name
		}
		if v, ok := f.Value.(interface{ IsCumulative() bool }); ok && v.IsCumulative() {
			name += " ..."
		}
		if f.Short != 0 {
			name = fmt.Sprintf("-%c, %s", f.Short, name)
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, code(strings.Join(f.Default, ", ")), cell(f.HelpWithEnvar()))
	}
}

func TestFlagsMarkdown(t *testing.T) {
	app := kingpin.New("x", "")
	app.Flag("plain", "A | piped\n  help.").Default("a").String()
	app.Flag("hidden", "never shown").Hidden().String()
	cmd := app.Command("serve", "")
	cmd.Flag("switch", "On by default.").Default("true").Bool()
	cmd.Flag("many", "Repeatable.").Strings()
	app.Command("verify", "").Flag("format", "not a serve flag").String()

	got := flagsMarkdown(app)
	for _, want := range []string{
		"| `--plain` | `a` | A \\| piped help. |",
		"| `--[no-]switch` | `true` | On by default. |",
		"| `--many ...` |  | Repeatable. |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing row %q in\n%s", want, got)
		}
	}
	for _, absent := range []string{"hidden", "format"} {
		if strings.Contains(got, absent) {
			t.Errorf("%q must not be in\n%s", absent, got)
		}
	}
}

func TestMetricsMarkdown(t *testing.T) {
	got := metricsMarkdown([]metricRow{
		{name: "b_total", typ: "counter", help: "Second. More.", labels: []string{"type", "file"}},
		{name: "a_gauge", typ: "gauge", help: "First | piped."},
	})
	want := "| metric | type | labels | description |\n|---|---|---|---|\n" +
		"| `a_gauge` | gauge |  | First \\| piped. |\n" +
		"| `b_total` | counter | `file`, `type` | Second. More. |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// goldenScrapes are the full scrapes kept byte for byte: the golden e2e
// setup's and the admin fixture's (internal/metrics).
var goldenScrapes = []string{e2eGoldenPath, "../../internal/metrics/fixtures/admin/healthy.prom"}

// notInGoldenScrapes are the declared families that no golden scrape
// exports, each with the setup it needs; every other family of
// metrics.Families must be in one, with its declared type. The golden
// setups are healthy, and these have no series on a healthy partition
// (internal/metrics' TestSparseAndDerivedFamilies writes each).
var notInGoldenScrapes = map[string]string{
	"kafka_replication_partition_epoch_regressions_total":             "an ISR update whose partition epoch did not increase",
	"kafka_replication_partition_under_replicated":                    "an ISR smaller than the replica set",
	"kafka_replication_partition_under_min_isr":                       "an ISR below min.insync.replicas",
	"kafka_replication_partition_at_min_isr":                          "an ISR exactly at min.insync.replicas",
	"kafka_replication_partition_isr_headroom":                        "--no-collector.partition-labels (per-topic form only)",
	"kafka_replication_partition_high_watermark_regressions_total":    "a high watermark that went back between polls",
	"kafka_replication_partition_eligible_leader_replicas":            "a cluster with KIP-966 ELR",
	"kafka_replication_partition_last_known_eligible_leader_replicas": "a cluster with KIP-966 ELR",
	"kafka_replication_partition_under_replicated_by_reassignment":    "a reassignment adding a replica outside the ISR",
	"kafka_replication_partition_last_stable_offset_stalled":          "a transaction open past --collector.last-stable-offset.stall-threshold",
	"kafka_replication_metadata_quorum_unknown":                       "a DescribeQuorum denied, unsupported or failing (internal/metrics quorum tests write it)",
	"kafka_replication_partition_tiering_stalled":                     "tiering stalled past --collector.tiered-storage.stall-threshold",
}

// TestGoldenHasEveryFamily ties metrics.Families (the README and docs
// tables) to what the exporter writes: a declared family no golden scrape
// exports is untested output or dead, and an exported family missing from
// Families is undocumented.
func TestGoldenHasEveryFamily(t *testing.T) {
	exported := map[string]string{} // family name: its TYPE
	for _, path := range goldenScrapes {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if fields := strings.Fields(line); len(fields) == 4 && fields[0] == "#" && fields[1] == "TYPE" {
				exported[fields[2]] = fields[3]
			}
		}
	}
	declared := map[string]bool{}
	for _, f := range metrics.Families() {
		declared[f.Name] = true
		typ, ok := exported[f.Name]
		_, excused := notInGoldenScrapes[f.Name]
		switch {
		case ok && excused:
			t.Errorf("%s is in a golden scrape now: drop it from notInGoldenScrapes", f.Name)
		case !ok && !excused:
			t.Errorf("%s: declared in metrics.Families but in no golden scrape %v (or list it in notInGoldenScrapes with the setup it needs)", f.Name, goldenScrapes)
		case ok && typ != f.Type.String():
			t.Errorf("%s: declared %s, the golden scrape has %s", f.Name, f.Type, typ)
		}
	}
	for name := range notInGoldenScrapes {
		if !declared[name] {
			t.Errorf("%s in notInGoldenScrapes is not declared in metrics.Families", name)
		}
	}
	for name := range exported {
		if strings.HasPrefix(name, "kafka_replication_") && !declared[name] && name != programName+"_build_info" {
			t.Errorf("%s: in a golden scrape but not declared in metrics.Families (so not in the README tables)", name)
		}
	}
}

// ruleFile is a Prometheus rule file, every field spelled out so that strict
// decoding rejects a misspelled key instead of silently dropping it.
type ruleFile struct {
	Groups []struct {
		Name        string            `yaml:"name"`
		Interval    string            `yaml:"interval"`
		QueryOffset string            `yaml:"query_offset"`
		Limit       int               `yaml:"limit"`
		Labels      map[string]string `yaml:"labels"`
		Rules       []struct {
			Record        string            `yaml:"record"`
			Alert         string            `yaml:"alert"`
			Expr          string            `yaml:"expr"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			For           string            `yaml:"for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// alertsMarkdown renders one row per alerting rule (recording rules are
// skipped), in file order: name, severity, its for: duration ("—" when it
// fires at the first matching evaluation) and the summary as its one line,
// the name linked to its runbook section when the rule has a runbook_url
// annotation ending in an anchor.
func alertsMarkdown(rules []byte, runbook string) (string, error) {
	var rf ruleFile
	if err := yaml.UnmarshalStrict(rules, &rf); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| alert | severity | for | what it means |\n|---|---|---|---|\n")
	seen := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			name := "`" + r.Alert + "`"
			if _, anchor, ok := strings.Cut(r.Annotations["runbook_url"], "#"); ok && runbook != "" {
				name = fmt.Sprintf("[%s](%s#%s)", name, runbook, anchor)
			}
			wait := r.For
			if wait == "" {
				wait = "—"
			}
			row := fmt.Sprintf("| %s | %s | %s | %s |\n", name, r.Labels["severity"], wait, cell(r.Annotations["summary"]))
			if !seen[row] { // one alert written as several rules (one per source) is one row
				seen[row] = true
				b.WriteString(row)
			}
		}
	}
	return b.String(), nil
}

// cell makes text safe inside one Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// replaceBlock returns doc with the text between the lines "<!-- BEGIN name -->"
// and "<!-- END name -->" replaced by body.
func replaceBlock(doc, name, body string) (string, error) {
	begin, end := "<!-- BEGIN "+name+" -->\n", "<!-- END "+name+" -->"
	i := strings.Index(doc, begin)
	if i < 0 {
		return "", fmt.Errorf("marker %q not found", strings.TrimSpace(begin))
	}
	j := strings.Index(doc[i:], end)
	if j < 0 {
		return "", fmt.Errorf("marker %q not found after %q", end, strings.TrimSpace(begin))
	}
	j += i
	return doc[:i+len(begin)] + body + doc[j:], nil
}

func TestAlertsMarkdown(t *testing.T) {
	rules := `groups:
  - name: g
    rules:
      - record: job:x:sum
        expr: sum(x)
      - alert: XDown
        expr: x == 0
        for: 5m
        labels: {severity: critical}
        annotations:
          summary: X is down.
          runbook_url: https://example.com/runbook.md#xdown
      - alert: XDown
        expr: x_other == 0
        for: 5m
        labels: {severity: critical}
        annotations:
          summary: X is down.
          runbook_url: https://example.com/runbook.md#xdown
      - alert: NoRunbook
        expr: y
        labels: {severity: info}
        annotations: {summary: "Y."}
`
	got, err := alertsMarkdown([]byte(rules), "alerts/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "| alert | severity | for | what it means |\n|---|---|---|---|\n" +
		"| [`XDown`](alerts/runbook.md#xdown) | critical | 5m | X is down. |\n" +
		"| `NoRunbook` | info | — | Y. |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := alertsMarkdown([]byte("groups: [{name: g, rules: [{alert: A, fo: 5m}]}]"), ""); err == nil {
		t.Error("an unknown rule field (typo) must be an error")
	}
}

func TestReplaceBlock(t *testing.T) {
	doc := "a\n<!-- BEGIN T -->\nold\n<!-- END T -->\nz\n"
	got, err := replaceBlock(doc, "T", "new\n")
	if err != nil || got != "a\n<!-- BEGIN T -->\nnew\n<!-- END T -->\nz\n" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := replaceBlock("no markers", "T", ""); err == nil {
		t.Error("missing BEGIN marker must be an error")
	}
	if _, err := replaceBlock("<!-- BEGIN T -->\n", "T", ""); err == nil {
		t.Error("missing END marker must be an error")
	}
}
