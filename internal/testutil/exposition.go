// Package testutil holds the checks that the tests of more than one package
// share. Only tests import it.
package testutil

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// CheckExposition parses text as Prometheus does and checks what the
// parser lets through: HELP and TYPE once per family, every label value
// valid UTF-8. It returns the number of samples per family.
func CheckExposition(t testing.TB, text string) map[string]int {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	help, typ := map[string]int{}, map[string]int{}
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "#" {
			map[string]map[string]int{"HELP": help, "TYPE": typ}[f[1]][f[2]]++
		}
	}
	samples := map[string]int{}
	for name, mf := range families {
		if help[name] != 1 || typ[name] != 1 {
			t.Errorf("%s: want one HELP and one TYPE line, got %d and %d", name, help[name], typ[name])
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !utf8.ValidString(lp.GetValue()) {
					t.Errorf("%s: label %s=%q is not valid UTF-8", name, lp.GetName(), lp.GetValue())
				}
			}
		}
		samples[name] = len(mf.GetMetric())
	}
	return samples
}
