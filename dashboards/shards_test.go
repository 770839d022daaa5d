package dashboards

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestRulesKeepClusterLabels protects sharded and multi-cluster Prometheus
// setups: a cluster is named by target labels the rules cannot know (cluster,
// env, region…), so an aggregation may only drop the labels it names
// (`without`), never keep a fixed list (`by`, or no grouping at all), and a
// vector match may only narrow to `on (…)` labels that include instance,
// which is unique per scrape target across clusters.
func TestRulesKeepClusterLabels(t *testing.T) {
	for _, r := range loadRules(t) {
		name := r.Alert + r.Record
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, problem := range clusterLabelLosses(expr) {
			t.Errorf("%s: %s", name, problem)
		}
	}
}

// TestClusterLabelLossesCatches keeps the check honest: each expression here
// would merge two clusters' series, and the check must say so.
func TestClusterLabelLossesCatches(t *testing.T) {
	for _, expr := range []string{
		`max by (topic, partition) (kafka_replication_partition_high_watermark)`,
		`sum(kafka_replication_partition_under_min_isr)`,
		`count(kafka_replication_partition_leader == -1) > 0`,
		`kafka_replication_partition_high_watermark and on (topic, partition) kafka_replication_partition_leader`,
		`kafka_replication_partition_high_watermark * on (topic) group_left kafka_replication_topic_info`,
	} {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if len(clusterLabelLosses(e)) == 0 {
			t.Errorf("not caught: %s", expr)
		}
	}
	for _, expr := range []string{
		`max without (instance) (kafka_replication_partition_high_watermark)`,
		`up == 0 and on (job, instance) kafka_replication_exporter_build_info`,
		`count without (partition) (kafka_replication_partition_leader == -1) > 0`,
		`kafka_replication_partition_high_watermark and ignoring (topic_id) kafka_replication_topic_info`,
	} {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if p := clusterLabelLosses(e); len(p) > 0 {
			t.Errorf("false alarm on %s: %v", expr, p)
		}
	}
}

// clusterLabelLosses lists the places in expr that drop labels they do not
// name.
func clusterLabelLosses(expr parser.Expr) []string {
	var problems []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.AggregateExpr:
			if !n.Without {
				grouping := "no grouping"
				if len(n.Grouping) > 0 {
					grouping = "by (" + strings.Join(n.Grouping, ", ") + ")"
				}
				problems = append(problems, n.Op.String()+" with "+grouping+" drops the labels that name a cluster; use without (…)")
			}
		case *parser.BinaryExpr:
			if m := n.VectorMatching; m != nil && m.On && !slices.Contains(m.MatchingLabels, "instance") &&
				n.LHS.Type() == parser.ValueTypeVector && n.RHS.Type() == parser.ValueTypeVector {
				problems = append(problems, "on ("+strings.Join(m.MatchingLabels, ", ")+") matches series of different clusters; use ignoring (…) or include instance")
			}
		}
		return nil
	})
	return problems
}

// TestShardingDocNamesCrossSidecarRules keeps docs/deployment.md's sharding
// section true: every rule that joins what several sidecars report (it drops
// instance, or reads a recording rule that does) is wrong on a shard that
// holds only part of a cluster's sidecars, so the section must name it.
func TestShardingDocNamesCrossSidecarRules(t *testing.T) {
	doc := readSection(t, "docs/deployment.md", "## Sharded Prometheus")
	for _, name := range crossSidecarRules(t, loadRules(t)) {
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/deployment.md, Sharded Prometheus: %s joins sidecars but is not named there", name)
		}
	}
}

// crossSidecarRules returns, in file order, the rules that aggregate instance
// away or ignore it in a match, and those that read such a recording rule.
func crossSidecarRules(t *testing.T, rules []rule) []string {
	t.Helper()
	joined := map[string]bool{}
	var names []string
	for _, r := range rules {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
		if err != nil {
			t.Fatalf("%s: %v", r.Alert+r.Record, err)
		}
		cross := false
		parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
			switch n := node.(type) {
			case *parser.AggregateExpr:
				cross = cross || (n.Without && slices.Contains(n.Grouping, "instance"))
			case *parser.BinaryExpr:
				cross = cross || (n.VectorMatching != nil && !n.VectorMatching.On && slices.Contains(n.VectorMatching.MatchingLabels, "instance"))
			case *parser.VectorSelector:
				cross = cross || joined[n.Name]
			}
			return nil
		})
		if name := r.Alert + r.Record; cross && !joined[name] {
			joined[name] = true
			names = append(names, name)
		}
	}
	return names
}

// readSection returns a markdown file's text from heading to the next heading
// of the same level.
func readSection(t *testing.T, name, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s: no %q", name, heading)
	}
	text = text[i+1:]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(text[len(heading):], "\n"+level); j >= 0 {
		text = text[:len(heading)+j]
	}
	return text
}
