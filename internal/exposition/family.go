package exposition

// metricPrefix starts every family name this exporter defines.
const metricPrefix = "kafka_replication_"

// Type is a family's TYPE in the exposition.
type Type uint8

// The types the exporter uses: its values are sampled state, not distributions.
const (
	Gauge Type = iota
	Counter
)

func (t Type) String() string {
	if t == Counter {
		return "counter"
	}
	return "gauge"
}

// Family describes one metric family: the single source of its name, HELP,
// TYPE and label names for the writer (Table) and for the README (docgen).
type Family struct {
	Name   string   // full name, with metricPrefix
	Help   string   // one sentence; the README table can say more
	Type   Type     //
	Labels []string // label names, sorted: the order the writer renders them in
	Doc    string   // more for the README: which log lines (and level) it comes from
	// Rollup is the per-topic form of a per-partition family, exported
	// instead of it under --no-collector.partition-labels; nil = none.
	Rollup *Rollup
	// Sparse: in the per-partition form a 0 is not written, so a healthy
	// partition has no series; the per-topic rollup still counts it.
	Sparse bool
	// Derived: no per-partition form, because PromQL derives it from series
	// with the same labels; only the per-topic rollup is written.
	Derived bool

	text *textFamily // the rendered HELP and TYPE lines
}

// Rollup says how a per-partition family folds into one series per topic
// (RollupTable): same name and type, label topic only, its own HELP.
type Rollup struct {
	Family *Family
	Fold   Fold
	// Always exports a topic's series, as 0, even when none of its
	// partitions has a value; otherwise the topic then has no series.
	Always bool
}

// rollupLabels are the label names of a per-topic rollup.
var rollupLabels = []string{"topic"}

// Fold is how the values of a topic's partitions make its rollup value.
type Fold uint8

const (
	Sum Fold = iota // the sum (a count, for 0/1 values)
	Min             // the smallest
)

func NewFamily(name, help string, typ Type, labels ...string) *Family {
	f := &Family{Name: metricPrefix + name, Help: help, Type: typ, Labels: labels}
	f.text = newTextFamily(f.Name, f.Help, typ == Counter)
	return f
}

// WithDoc sets the README's extra text.
func (f *Family) WithDoc(doc string) *Family {
	f.Doc = doc
	return f
}

// RollsUp declares the family's per-topic form; help "" keeps the family's
// own HELP, for a counter whose sentence reads the same summed per topic.
func (f *Family) RollsUp(fold Fold, help string) *Family {
	if help == "" {
		help = f.Help
	}
	f.Rollup = &Rollup{Family: NewFamily(f.Name[len(metricPrefix):], help, f.Type, rollupLabels...), Fold: fold}
	return f
}

// RollsUpAlways is RollsUp with Rollup.Always.
func (f *Family) RollsUpAlways(fold Fold, help string) *Family {
	f.RollsUp(fold, help).Rollup.Always = true
	return f
}

// MarkSparse marks the family Sparse.
func (f *Family) MarkSparse() *Family {
	f.Sparse = true
	return f
}

// MarkDerived marks the family Derived.
func (f *Family) MarkDerived() *Family {
	f.Derived = true
	return f
}
