package genlog

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/invariant"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// TestManifestIsWhatTheParserFinds reads a generated log with logparse and
// its Checker: every count of the manifest must come out exactly.
func TestManifestIsWhatTheParserFinds(t *testing.T) {
	for _, o := range []Options{
		{Lines: 50_000, Seed: 7, Violations: 3},
		{Lines: 20_000, Seed: 1, Partitions: 1000, Violations: 5, Broker: 2},
		{Lines: 10, Seed: 3},
	} {
		var log bytes.Buffer
		m, err := Write(&log, o)
		if err != nil {
			t.Fatal(err)
		}
		var lines, records int64
		events := make(map[string]int64)
		got := make(map[string]Expect)
		sp, p, c := logparse.NewSplitter(), logparse.NewParser(time.UTC), invariant.NewChecker()
		var ev logparse.Event
		var res invariant.Result
		observe := func(rec *logparse.Record) {
			records++
			if !p.ParseInto(rec, &ev) {
				return
			}
			events[ev.Type.String()]++
			c.Observe(&ev, &res)
			for _, inv := range invariant.Invariants() {
				e := got[inv.String()]
				if res.Checked.Has(inv) {
					e.Checked++
				}
				if res.Violated.Has(inv) {
					e.Violations++
				}
				got[inv.String()] = e
			}
		}
		sc := bufio.NewScanner(&log)
		for sc.Scan() {
			lines++
			if rec := sp.Push(sc.Bytes()); rec != nil {
				observe(rec)
			}
		}
		for rec := sp.Flush(); rec != nil; rec = sp.Flush() {
			observe(rec)
		}
		if lines != m.Lines || records != m.Records || lines < int64(o.Lines) {
			t.Errorf("%+v: want %d lines (≥ %d) and %d records, got %d and %d", o, m.Lines, o.Lines, m.Records, lines, records)
		}
		if sp.Malformed() != 0 || p.Malformed() != 0 {
			t.Errorf("%+v: want no malformed line, got %d split, %d parsed", o, sp.Malformed(), p.Malformed())
		}
		if len(m.Events) != len(logparse.Types()) || len(m.Invariants) != len(invariant.Invariants()) {
			t.Errorf("%+v: want every type and invariant in the manifest, got %v %v", o, m.Events, m.Invariants)
		}
		for name, want := range m.Events {
			if events[name] != want {
				t.Errorf("%+v: %s: want %d events, got %d", o, name, want, events[name])
			}
		}
		for name, want := range m.Invariants {
			if got[name] != want {
				t.Errorf("%+v: %s: want %+v, got %+v", o, name, want, got[name])
			}
		}
		if o.Violations > 0 {
			for _, name := range []string{"hw_monotonic", "partition_epoch_monotonic", "min_isr_enforced"} {
				if v := m.Invariants[name].Violations; v != int64(o.Violations) {
					t.Errorf("%+v: %s: want the %d injected violations, got %d", o, name, o.Violations, v)
				}
			}
		}
	}
}

// TestMixCoversTheParser: a log of a realistic size has every kind of line
// the generator knows, so a test on it exercises each of them.
func TestMixCoversTheParser(t *testing.T) {
	m, err := Write(new(bytes.Buffer), Options{Lines: 200_000, Seed: 7, Violations: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range formats {
		if f.event != logparse.TypeNone && m.Events[f.event.String()] == 0 {
			t.Errorf("want some %s events, got none", f.event)
		}
	}
}

func TestSameSeedSameLog(t *testing.T) {
	gen := func(seed uint64) []byte {
		var b bytes.Buffer
		if _, err := Write(&b, Options{Lines: 5000, Seed: seed, Violations: 1}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if !bytes.Equal(gen(7), gen(7)) {
		t.Error("want the same bytes from the same seed")
	}
	if bytes.Equal(gen(7), gen(8)) {
		t.Error("want another log from another seed")
	}
}

// TestFormatsAreReal holds every line format to a real broker's output:
// each must match a line of the Kafka 4.1 captures in internal/logparse/testdata,
// values aside.
func TestFormatsAreReal(t *testing.T) {
	paths, _ := filepath.Glob("../logparse/testdata/real-4.1*.log")
	if len(paths) < 5 {
		t.Fatalf("want the real Kafka 4.1 captures, found %v", paths)
	}
	var real []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		real = append(real, strings.Split(string(b), "\n")...)
	}
	matches := func(re *regexp.Regexp) bool {
		for _, l := range real {
			if re.MatchString(l) {
				return true
			}
		}
		return false
	}
	for _, f := range formats {
		re := regexp.MustCompile(`^\[[-0-9 :,]+\] ` + f.level + " " + layoutPattern(f.msg) + ` \(` + regexp.QuoteMeta(f.logger) + `\)$`)
		if !matches(re) {
			t.Errorf("no real line has the form %s %q (%s)", f.level, f.msg, f.logger)
		}
	}
	if re := regexp.MustCompile("^" + layoutPattern(notEnoughReplicas) + "$"); !matches(re) {
		t.Errorf("no real line has the form %q", notEnoughReplicas)
	}
}

// layoutPattern turns a fmt layout into a pattern: its text as it is, a
// number where %d is, any text where %s is.
func layoutPattern(layout string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(layout, '%')
		if i < 0 || i+1 == len(layout) {
			b.WriteString(regexp.QuoteMeta(layout))
			return b.String()
		}
		b.WriteString(regexp.QuoteMeta(layout[:i]))
		switch layout[i+1] {
		case 'd':
			b.WriteString(`-?[0-9]+`)
		case 's':
			b.WriteString(`.*?`)
		}
		layout = layout[i+2:]
	}
}
