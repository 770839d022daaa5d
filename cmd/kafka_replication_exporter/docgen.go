package main

// The README's flags, metrics and alerts tables are rendered from the code
// (the kingpin model, the golden scrape, the rule file) by the functions here,
// and docgen_test.go fails when README.md differs from what they render, so the
// tables cannot drift from what the binary really does.

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"
)

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

// metricsMarkdown renders one row per metric family: every family of the text
// exposition (name, type, label names as the union over its samples, help
// followed by docs[name] when there is one), plus the described families it
// lacks. The golden scrape leaves out the
// families whose values change from run to run (times, durations, the build);
// those are gauges by the Prometheus naming conventions, and any other missing
// family is an error, because its type would be a guess.
func metricsMarkdown(exposition io.Reader, described []*prometheus.Desc, docs map[string]string) (string, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(exposition)
	if err != nil {
		return "", err
	}
	type row struct{ typ, labels, help string }
	rows := map[string]row{}
	for name, mf := range families {
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		rows[name] = row{strings.ToLower(mf.GetType().String()), labelList(labels), mf.GetHelp()}
	}
	for _, d := range described {
		name, help, labels, err := parseDesc(d)
		if err != nil {
			return "", err
		}
		if _, ok := rows[name]; ok {
			continue
		}
		if !volatileGauge(name) {
			return "", fmt.Errorf("metric %s is not in the golden scrape", name)
		}
		rows[name] = row{"gauge", labelList(labels), help}
	}

	names := make([]string, 0, len(rows))
	for name := range rows {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| metric | type | labels | description |\n|---|---|---|---|\n")
	for _, name := range names {
		r := rows[name]
		desc := r.help
		if doc := docs[name]; doc != "" {
			desc += " " + doc
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, r.typ, r.labels, cell(desc))
	}
	return b.String(), nil
}

func volatileGauge(name string) bool {
	return strings.HasSuffix(name, "_timestamp_seconds") || strings.HasSuffix(name, "_duration_seconds") ||
		strings.HasSuffix(name, "_build_info")
}

func labelList(set map[string]bool) string {
	l := make([]string, 0, len(set))
	for name := range set {
		l = append(l, "`"+name+"`")
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}

// descPattern matches prometheus.Desc.String(), the only public view of a
// descriptor's name, help and labels.
var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), unit: "(?:[^"\\]|\\.)*", constLabels: \{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\}, variableLabels: \{([^}]*)\}\}$`)

var constLabelPattern = regexp.MustCompile(`(\w+)="(?:[^"\\]|\\.)*"`)

// parseDesc returns a descriptor's name, help and label names (const and
// variable).
func parseDesc(d *prometheus.Desc) (name, help string, labels map[string]bool, err error) {
	m := descPattern.FindStringSubmatch(d.String())
	if m == nil {
		return "", "", nil, fmt.Errorf("unexpected descriptor format %s", d)
	}
	if name, err = strconv.Unquote(m[1]); err != nil {
		return "", "", nil, err
	}
	if help, err = strconv.Unquote(m[2]); err != nil {
		return "", "", nil, err
	}
	labels = map[string]bool{}
	for _, pair := range constLabelPattern.FindAllStringSubmatch(m[3], -1) {
		labels[pair[1]] = true
	}
	for _, l := range strings.Split(m[4], ",") {
		if l = strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"); l != "" {
			labels[l] = true
		}
	}
	return name, help, labels, nil
}

// ruleFile is a Prometheus rule file, every field spelled out so that strict
// decoding rejects a misspelt key instead of silently dropping it.
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
// skipped), in file order, each linked to its runbook section when the rule
// has a runbook_url annotation ending in an anchor.
func alertsMarkdown(rules []byte, runbook string) (string, error) {
	var rf ruleFile
	if err := yaml.UnmarshalStrict(rules, &rf); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| alert | severity | for | summary |\n|---|---|---|---|\n")
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
			row := fmt.Sprintf("| %s | %s | %s | %s |\n", name, r.Labels["severity"], code(r.For), cell(r.Annotations["summary"]))
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
