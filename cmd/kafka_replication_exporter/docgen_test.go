package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector"
)

const (
	readmePath = "../../README.md"
	rulesPath  = "../../alerts/kafka-replication.rules.yml"
	// runbookLink is relative to README.md.
	runbookLink = "alerts/runbook.md"
)

// The package has one -update flag for all its golden files (e2e_test.go
// declares it when present); declare it here only if nobody else did, because
// a second flag.Bool("update") panics.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files (README.md tables) from this run")
	}
}

func updating() bool {
	return flag.Lookup("update").Value.(flag.Getter).Get().(bool)
}

// docApp builds the application the way run() does, for its flag model.
// TestDocAppMatchesRun proves it has the same flags and help texts as the
// real program, so a change to run() cannot slip past the README.
func docApp() *kingpin.Application {
	app := kingpin.New(programName, "")
	app.Version(version.Print(programName))
	app.HelpFlag.Short('h')
	promslogflag.AddFlags(app, &promslog.Config{})
	app.Flag("log.timezone", "Time zone of the broker's log timestamps, which carry none (IANA name, e.g. UTC or Europe/Berlin; \"Local\" = this machine's).").Default("Local").String()
	newServeCommand(app)
	return app
}

func TestDocAppMatchesRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Not --help-long: kingpin writes that to os.Stdout, not the UsageWriter.
	if code := run([]string{"serve", "--help"}, strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Fatalf("serve --help: exit %d, stderr %s", code, stderr.String())
	}
	// kingpin wraps help text on spaces only, so comparing with all whitespace
	// collapsed finds every help text verbatim.
	help := strings.Join(strings.Fields(stdout.String()), " ")

	model := docApp().Model()
	flags := append([]*kingpin.FlagModel{}, model.Flags...)
	for _, cmd := range model.Commands {
		if cmd.Name == "serve" {
			flags = append(flags, cmd.Flags...)
		}
	}
	known := map[string]bool{}
	for _, f := range flags {
		known[f.Name] = true
		if f.Hidden {
			continue
		}
		if !strings.Contains(help, "--"+f.Name) && !strings.Contains(help, "--[no-]"+f.Name) {
			t.Errorf("flag --%s is not in the program's serve --help", f.Name)
		}
		if want := strings.Join(strings.Fields(f.Help), " "); !strings.Contains(help, want) {
			t.Errorf("flag --%s: help text %q is not the program's", f.Name, want)
		}
	}
	// The other direction: a flag the program has but docApp lacks. serve --help
	// lists the global flags and serve's.
	for _, m := range regexp.MustCompile(`(?m)^ {2,6}(?:-\w, )?--(?:\[no-\])?([\w.-]+)`).FindAllStringSubmatch(stdout.String(), -1) {
		if !known[m[1]] {
			t.Errorf("the program has --%s but docApp does not; update docApp to match run()", m[1])
		}
	}
}

// TestReadmeTables is the docs freshness check: README.md's generated blocks
// must equal what the code renders. With -update it rewrites them.
func TestReadmeTables(t *testing.T) {
	exposition, err := os.Open(e2eGoldenPath)
	if err != nil {
		t.Fatal(err)
	}
	defer exposition.Close()
	docs := map[string]string{}
	for _, f := range collector.Families() {
		if f.Doc != "" {
			docs[f.Name] = f.Doc
		}
	}
	metrics, err := metricsMarkdown(exposition, describeAll(), docs)
	if err != nil {
		t.Fatalf("%s: %v", e2eGoldenPath, err)
	}
	rules, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := alertsMarkdown(rules, runbookLink)
	if err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}

	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, block := range []struct{ name, body string }{
		{"FLAGS", flagsMarkdown(docApp())},
		{"METRICS", metrics},
		{"ALERTS", alerts},
	} {
		if readme, err = replaceBlock(readme, block.name, block.body); err != nil {
			t.Fatalf("README.md: %v", err)
		}
	}
	if readme == string(raw) {
		return
	}
	if updating() {
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote the generated tables in README.md")
		return
	}
	t.Errorf("README.md tables are stale; run: make docs  (go test ./cmd/kafka_replication_exporter/ -run TestReadmeTables -update)\n%s",
		firstDifference(string(raw), readme))
}

// describeAll returns the descriptors of every family serve exports: the
// build info from the registry, every kafka_replication_* family from the
// descriptor list.
func describeAll() []*prometheus.Desc {
	descs := []*prometheus.Desc{describe(versioncollector.NewCollector(programName))}
	for _, f := range collector.Families() {
		descs = append(descs, prometheus.NewDesc(f.Name, f.Help, f.Labels, nil))
	}
	return descs
}

// describe returns the one descriptor of c.
func describe(c prometheus.Collector) *prometheus.Desc {
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	return <-ch
}

// e2eGoldenPath is the golden scrape: every metric the exporter exposes.
const e2eGoldenPath = "../../collector/fixtures/e2e-output.txt"

func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) && i < len(w); i++ {
		if h[i] != w[i] {
			return fmt.Sprintf("first difference, line %d:\n  README:    %s\n  generated: %s", i+1, h[i], w[i])
		}
	}
	return "README and generated text differ in length"
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
	in := `# HELP b_total Second.
# TYPE b_total counter
b_total{file="x"} 1
b_total{type="y"} 2
# HELP a_gauge First | piped.
# TYPE a_gauge gauge
a_gauge 3
`
	described := []*prometheus.Desc{
		prometheus.NewDesc("b_total", "Described help is not used.", []string{"file"}, nil),
		prometheus.NewDesc("c_last_timestamp_seconds", "Left out of the golden \"file\".", []string{"file"}, prometheus.Labels{"k": "v}"}),
	}
	got, err := metricsMarkdown(strings.NewReader(in), described, map[string]string{"b_total": "More."})
	if err != nil {
		t.Fatal(err)
	}
	want := "| metric | type | labels | description |\n|---|---|---|---|\n" +
		"| `a_gauge` | gauge |  | First \\| piped. |\n" +
		"| `b_total` | counter | `file`, `type` | Second. More. |\n" +
		"| `c_last_timestamp_seconds` | gauge | `file`, `k` | Left out of the golden \"file\". |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := metricsMarkdown(strings.NewReader("# TYPE x nonsense\n"), nil, nil); err == nil {
		t.Error("a malformed exposition must be an error")
	}
	// A described family missing from the golden whose type is not implied
	// by its name must fail, not be guessed.
	if _, err := metricsMarkdown(strings.NewReader(in), []*prometheus.Desc{prometheus.NewDesc("d_total", "h", nil, nil)}, nil); err == nil {
		t.Error("a counter missing from the golden must be an error")
	}
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
	want := "| alert | severity | for | summary |\n|---|---|---|---|\n" +
		"| [`XDown`](alerts/runbook.md#xdown) | critical | `5m` | X is down. |\n" +
		"| `NoRunbook` | info |  | Y. |\n"
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
