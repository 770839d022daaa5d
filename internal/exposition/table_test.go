package exposition

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testutil"
)

// checkExposition parses text as Prometheus does (testutil.CheckExposition).
var checkExposition = testutil.CheckExposition

// scrapeText renders sources as /metrics does.
func scrapeText(t testing.TB, srcs ...TableSource) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, nil, nil, srcs...); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// partitionLabels are the label names of a per-partition test family.
var partitionLabels = []string{"partition", "topic"}

var testLabelFamilies = []*Family{
	NewFamily("test_a", `HELP with a \ backslash, "quotes" and a`+"\nnewline.", Gauge, "file", "type"),
	NewFamily("test_b_total", "Second column.", Counter, "file", "type"),
}

// Label values that need escaping or are not valid UTF-8, and values of
// every format, render to an exposition the Prometheus parser accepts, in
// series order.
func TestTableOutputParses(t *testing.T) {
	labels := [][2]string{
		{"plain", "a"},
		{`back\slash`, "b"},
		{`"quoted"`, "c"},
		{"new\nline", "d"},
		{"/var/log/kafka/\xff\xfeserver.log", "e"},
		{"caf\xc3", "é"},
		{"", "empty"},
	}
	values := []float64{0, 1, -1, 999_999, 1e6, 1_234_567, math.MaxUint64, 0.5, 1.7e9 + 0.123, math.NaN(), math.Inf(1), math.Inf(-1)}
	table := &Table{
		Rows:   len(labels),
		Labels: func(row int, v []string) { v[0], v[1] = labels[row][0], labels[row][1] },
		Columns: []Column{
			{testLabelFamilies[0], func(row int) (float64, bool) { return values[row], true }},
			{testLabelFamilies[1], func(row int) (float64, bool) { return values[len(values)-1-row], row%2 == 0 }},
		},
	}
	text := scrapeText(t, TableSource(func() ([]*Table, func()) { return []*Table{table}, nil }))
	samples := checkExposition(t, text)
	if samples["kafka_replication_test_a"] != len(labels) || samples["kafka_replication_test_b_total"] != (len(labels)+1)/2 {
		t.Errorf("want every row, and the rows with a value, got %v\n%s", samples, text)
	}
	for _, want := range []string{
		"kafka_replication_test_a{file=\"/var/log/kafka/\uFFFDserver.log\",type=\"e\"} 1e+06",
		`kafka_replication_test_a{file="\"quoted\"",type="c"} -1`,
		`kafka_replication_test_a{file="back\\slash",type="b"} 1`,
		`kafka_replication_test_a{file="new\nline",type="d"} 999999`,
		`kafka_replication_test_b_total{file="",type="empty"} 1.234567e+06`,
		`# HELP kafka_replication_test_a HELP with a \\ backslash, "quotes" and a\nnewline.`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("want the line %s in\n%s", want, text)
		}
	}
	// Series in the order Prometheus' encoder sorts them: by label values.
	var order []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "kafka_replication_test_a{") {
			order = append(order, l)
		}
	}
	if !strings.HasPrefix(order[0], `kafka_replication_test_a{file="",`) || !strings.HasPrefix(order[len(order)-1], `kafka_replication_test_a{file="plain",`) {
		t.Errorf("want the rows sorted by label values, got\n%s", strings.Join(order, "\n"))
	}
}

// A family without labels is a one-row table without Labels.
func TestTableWithoutLabels(t *testing.T) {
	up := NewFamily("test_up", "1 if the test is up.", Gauge)
	table := &Table{Rows: 1, Columns: []Column{{up, func(int) (float64, bool) { return 1, true }}}}
	text := scrapeText(t, TableSource(func() ([]*Table, func()) { return []*Table{table}, nil }))
	want := "# HELP kafka_replication_test_up 1 if the test is up.\n# TYPE kafka_replication_test_up gauge\nkafka_replication_test_up 1\n"
	if text != want {
		t.Errorf("got %q, want %q", text, want)
	}
	checkExposition(t, text)
}

// A table's Prepare runs only when one of its families is written, once
// however many columns it has, and may set Rows.
func TestTablePrepareOnlyWhenWritten(t *testing.T) {
	prepared := 0
	src := TableSource(func() ([]*Table, func()) {
		return []*Table{{
			Prepare: func(t *Table) { prepared++; t.Rows = 2 },
			Labels:  func(row int, v []string) { v[0], v[1] = "f", []string{"a", "b"}[row] },
			Columns: []Column{
				{testLabelFamilies[0], func(row int) (float64, bool) { return float64(row), true }},
				{testLabelFamilies[1], func(row int) (float64, bool) { return 1, true }},
			},
		}}, nil
	})
	var b strings.Builder
	if err := WriteText(&b, nil, func(string) bool { return false }, src); err != nil {
		t.Fatal(err)
	}
	if prepared != 0 || b.Len() != 0 {
		t.Errorf("want no preparation and no output when no family is kept, got %d and %q", prepared, b.String())
	}
	samples := checkExposition(t, scrapeText(t, src))
	if prepared != 1 || samples[testLabelFamilies[0].Name] != 2 || samples[testLabelFamilies[1].Name] != 2 {
		t.Errorf("want one preparation and the rows it set, got %d and %v", prepared, samples)
	}
}

// RollupTable folds a topic's rows by each family's Rollup: a sum or the
// smallest of the values present; without one, no series unless Always;
// families without a Rollup have no column.
func TestRollupTable(t *testing.T) {
	type row struct {
		v  float64
		ok bool
	}
	value := func(r row) (float64, bool) { return r.v, r.ok }
	sum := NewFamily("test_sum", "Test.", Gauge, partitionLabels...).RollsUp(Sum, "Sum.")
	least := NewFamily("test_min", "Test.", Gauge, partitionLabels...).RollsUp(Min, "Min.")
	always := NewFamily("test_always", "Test.", Gauge, partitionLabels...).RollsUpAlways(Sum, "Always.")
	none := NewFamily("test_none", "Test.", Gauge, partitionLabels...)
	rows := []row{{3, true}, {-1, true}, {5, false}, {0, false}, {0, false}}
	got := RollupTable(rows, []int{3, 5}, []string{"a", "b"}, []RowColumn[row]{
		{sum, value}, {least, value}, {always, value}, {none, value},
	})
	text := scrapeText(t, TableSource(func() ([]*Table, func()) { return []*Table{got}, nil }))
	for _, want := range []string{
		"kafka_replication_test_sum{topic=\"a\"} 2\n",
		"kafka_replication_test_min{topic=\"a\"} -1\n",
		"kafka_replication_test_always{topic=\"a\"} 2\n",
		"kafka_replication_test_always{topic=\"b\"} 0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in\n%s", want, text)
		}
	}
	for _, absent := range []string{`test_sum{topic="b"}`, `test_min{topic="b"}`, "test_none"} {
		if strings.Contains(text, absent) {
			t.Errorf("want no %s in\n%s", absent, text)
		}
	}
	if len(got.Columns) != 3 {
		t.Errorf("want a column for each family with a Rollup, got %d", len(got.Columns))
	}
	checkExposition(t, text)
}
