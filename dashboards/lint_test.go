package dashboards

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// The rules of grafana/dashboard-linter that apply here, which cannot be
// built on this project's machines (alerts-dashboards.md §4.5, §7.6).

// panelsOf flattens rows, collapsed or not.
func panelsOf(d *dashboardJSON) []map[string]any {
	var out []map[string]any
	for _, p := range d.Panels {
		out = append(out, p)
		if inner, ok := p["panels"].([]any); ok {
			for _, q := range inner {
				if m, ok := q.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestDashboardLint(t *testing.T) {
	uids := map[string]string{}
	for name := range Dashboards {
		d := loadDashboard(t, name)
		t.Run(name, func(t *testing.T) {
			if other, ok := uids[d.UID]; ok || d.UID == "" {
				t.Errorf("uid %q is empty or also used by %s", d.UID, other)
			}
			uids[d.UID] = name
			if d.Editable {
				t.Error("editable: dashboards are generated; edits in Grafana would be lost")
			}
			if d.raw["__inputs"] != nil {
				t.Error("__inputs: use the datasource variable, not an import-time input")
			}
			lintVariables(t, d)
			lintPanels(t, d)
			for _, a := range d.Annotations.List {
				if uid := dig(a, "datasource", "uid"); uid != "${datasource}" {
					t.Errorf("annotation %v: datasource %v, want ${datasource}", a["name"], uid)
				}
			}
		})
	}
}

func lintVariables(t *testing.T, d *dashboardJSON) {
	datasources := 0
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			datasources++
			if v.Name != "datasource" || v.Query != "prometheus" {
				t.Errorf("datasource variable %q of %v, want \"datasource\" of prometheus", v.Name, v.Query)
			}
		case "query":
			if v.Refresh != 2 {
				t.Errorf("variable %s: refresh %d, want 2 (on time-range change)", v.Name, v.Refresh)
			}
			if v.Datasource["uid"] != "${datasource}" {
				t.Errorf("variable %s: datasource %v, want ${datasource}", v.Name, v.Datasource)
			}
		}
	}
	if datasources != 1 {
		t.Errorf("%d datasource variables, want exactly 1", datasources)
	}
	if !slices.ContainsFunc(d.Templating.List, func(v variableJSON) bool { return v.Name == "cluster" }) {
		t.Error("no cluster variable")
	}
}

var rangeWindow = regexp.MustCompile(`\[[^\]]*\]`)

func lintPanels(t *testing.T, d *dashboardJSON) {
	ids := map[float64]bool{}
	for _, p := range panelsOf(d) {
		title, _ := p["title"].(string)
		if id, _ := p["id"].(float64); id != 0 {
			if ids[id] {
				t.Errorf("panel %q: duplicate id %v", title, id)
			}
			ids[id] = true
		}
		if p["type"] == "row" {
			continue
		}
		if title == "" {
			t.Errorf("panel without title: %v", p)
		}
		if desc, _ := p["description"].(string); desc == "" {
			t.Errorf("panel %q: no description", title)
		}
		if unit, _ := dig(p, "fieldConfig", "defaults", "unit").(string); unit == "" && dig(p, "fieldConfig", "defaults", "mappings") == nil {
			t.Errorf("panel %q: no unit", title)
		}
		if uid := dig(p, "datasource", "uid"); uid != "${datasource}" {
			t.Errorf("panel %q: datasource %v, want ${datasource}", title, uid)
		}
		switch p["type"] {
		case "timeseries", "state-timeline":
			if dig(p, "options", "legend", "showLegend") != true {
				t.Errorf("panel %q: legend hidden (the SDK default); set it explicitly", title)
			}
			if mode, _ := dig(p, "options", "tooltip", "mode").(string); mode == "" {
				t.Errorf("panel %q: tooltip mode unset (the SDK default)", title)
			}
		}
		targets, _ := p["targets"].([]any)
		if len(targets) == 0 {
			t.Errorf("panel %q: no targets", title)
		}
		refIDs := map[string]bool{}
		for _, target := range targets {
			expr, _ := dig(target, "expr").(string)
			if uid := dig(target, "datasource", "uid"); uid != "${datasource}" {
				t.Errorf("panel %q: target datasource %v, want ${datasource}", title, uid)
			}
			ref, _ := dig(target, "refId").(string)
			if ref == "" || refIDs[ref] {
				t.Errorf("panel %q: target refId %q empty or duplicate", title, ref)
			}
			refIDs[ref] = true
			for _, w := range rangeWindow.FindAllString(expr, -1) {
				if !slices.Contains(promqlWindows, w) {
					t.Errorf("panel %q: range %s, want [$__rate_interval] (or one of %v)\n%s", title, w, promqlWindows, expr)
				}
			}
			if !strings.Contains(expr, `cluster="$cluster"`) {
				t.Errorf("panel %q: query does not select $cluster\n%s", title, expr)
			}
		}
	}
}

// TestCountersAreRated is dashboard-linter's target-counter-agg-rule, applied
// to the rules as well: a raw _total is a meaningless ever-growing number.
// One idiom is allowed: `c unless c offset d`, a counter born within d, whose
// first step increase() never sees (sparse families are written only once
// they are not 0).
func TestCountersAreRated(t *testing.T) {
	for _, q := range allQueries(t) {
		node, err := parser.NewParser(parser.Options{}).ParseExpr(q.expr)
		if err != nil {
			continue // TestQueriesParse reports it
		}
		parser.Inspect(node, func(n parser.Node, path []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || !strings.HasSuffix(vs.Name, "_total") {
				return nil
			}
			if bornWithin(vs, path) {
				return nil
			}
			if len(path) >= 2 {
				if _, ok := path[len(path)-1].(*parser.MatrixSelector); ok {
					if call, ok := path[len(path)-2].(*parser.Call); ok && slices.Contains([]string{"rate", "irate", "increase"}, call.Func.Name) {
						return nil
					}
				}
			}
			t.Errorf("%s: %s is a counter used without rate/irate/increase\n%s", q.where, vs.Name, q.expr)
			return nil
		})
	}
}

// bornWithin reports whether vs is a side of `c unless c offset d`.
func bornWithin(vs *parser.VectorSelector, path []parser.Node) bool {
	for i := len(path) - 1; i >= 0; i-- {
		switch n := path[i].(type) {
		case *parser.ParenExpr:
			continue
		case *parser.BinaryExpr:
			l, lok := unparen(n.LHS).(*parser.VectorSelector)
			r, rok := unparen(n.RHS).(*parser.VectorSelector)
			return n.Op == parser.LUNLESS && lok && rok && l.Name == vs.Name && r.Name == vs.Name &&
				l.OriginalOffset == 0 && r.OriginalOffset > 0
		}
		return false
	}
	return false
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}
