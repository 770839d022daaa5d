package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/invariant"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// maxExamples bounds the violating lines quoted per invariant.
const maxExamples = 5

// Status of one invariant in a verify report.
const (
	statusPassed  = "PASSED"
	statusFailed  = "FAILED"
	statusSkipped = "SKIPPED"
)

type example struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Detail string `json:"detail"`
	Text   string `json:"text"`
}

type invariantReport struct {
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	Checked    int64     `json:"checked"`
	Violations int64     `json:"violations"`
	Examples   []example `json:"examples"`
	Reason     string    `json:"reason,omitempty"` // why SKIPPED
}

type verifyReport struct {
	Invariants      []invariantReport `json:"invariants"`
	Events          map[string]int64  `json:"events"`
	Lines           int64             `json:"lines"`
	Records         int64             `json:"records"`
	UnparsedRecords int64             `json:"unparsed_records"`
	MalformedLines  int64             `json:"malformed_lines"`
}

// failed reports whether any invariant was violated.
func (r *verifyReport) failed() bool {
	for _, inv := range r.Invariants {
		if inv.Status == statusFailed {
			return true
		}
	}
	return false
}

// runVerify checks the invariants over the files and builds the report.
func runVerify(paths []string, loc *time.Location, stdin io.Reader) (*verifyReport, error) {
	checker := invariant.NewChecker()
	invs := invariant.Invariants()
	reports := make([]invariantReport, len(invs))
	for i, inv := range invs {
		reports[i] = invariantReport{Name: inv.String(), Examples: []example{}}
	}
	var res invariant.Result
	st, err := readLogs(paths, loc, stdin, false, func(ev *logparse.Event, first []byte) {
		checker.Observe(ev, &res)
		if res.Checked == 0 && res.Violated == 0 {
			return
		}
		// Visit only the invariants this event touched (a bit set, most
		// often one bit), not all of them: this runs once per event.
		for set := res.Checked | res.Violated; set != 0; set &= set - 1 {
			inv := invariant.Invariant(bits.TrailingZeros16(uint16(set)))
			ir := &reports[inv]
			if res.Checked.Has(inv) {
				ir.Checked++
			}
			if res.Violated.Has(inv) {
				ir.Violations++
				if len(ir.Examples) < maxExamples {
					ir.Examples = append(ir.Examples, example{File: ev.File, Line: ev.Line, Detail: res.Detail, Text: string(first)})
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, inv := range invs {
		ir := &reports[inv]
		switch {
		case ir.Violations > 0 && !inv.Informational():
			ir.Status = statusFailed
		case ir.Checked == 0 && ir.Violations == 0:
			ir.Status = statusSkipped
			ir.Reason = inv.SkipReason()
		default:
			ir.Status = statusPassed
		}
	}
	rep := &verifyReport{
		Invariants:      reports,
		Events:          make(map[string]int64),
		Lines:           int64(st.Lines),
		Records:         int64(st.Records),
		UnparsedRecords: int64(st.Records - st.Parsed),
		// A line the reader cut is over the Splitter's bound too, which
		// counted it already.
		MalformedLines: int64(st.Malformed),
	}
	for _, t := range logparse.Types() {
		rep.Events[t.String()] = int64(st.EventCount[t])
	}
	return rep, nil
}

// Titles for the text report, in the seed script's words.
var invariantTitles = map[string]string{
	"hw_monotonic":              "High watermark monotonicity",
	"isr_change_versioned":      "ISR changes carry a version (partition epoch fencing)",
	"partition_epoch_monotonic": "Partition epoch monotonicity",
	"min_isr_enforced":          "Min ISR enforcement",
	"isr_acks_complete":         "ISR acknowledgement completeness (acks=all)",
	"no_truncation_below_hw":    "No truncation below the high watermark (committed data kept)",
	"no_unclean_election":       "No unclean leader election",
	"hw_stall_under_min_isr":    "HW increments blocked under min ISR (KAFKA-15583, informational)",
	"metadata_hw_monotonic":     "KRaft metadata log high watermark monotonicity",
}

var passedWords = map[string]string{
	"hw_monotonic":              "HW never decreased across %d updates",
	"isr_change_versioned":      "all %d ISR changes include a version",
	"partition_epoch_monotonic": "partition epochs increased across %d updates",
	"min_isr_enforced":          "min ISR correctly enforced across %d rejections",
	"isr_acks_complete":         "%d complete ISR acknowledgements (all replicas acked)",
	"no_truncation_below_hw":    "%d truncations, none below the high watermark",
	"no_unclean_election":       "%d leader elections checked, none unclean",
	"hw_stall_under_min_isr":    "%d HW increments were blocked while the partition was under min ISR",
	"metadata_hw_monotonic":     "metadata HW never went back across %d quorum leaderships",
}

func writeVerifyText(w io.Writer, paths []string, rep *verifyReport) {
	fmt.Fprintln(w, "=== Kafka Replication Protocol Verification ===")
	fmt.Fprintf(w, "Analyzing: %s\n", terminalSafe(strings.Join(orderInputs(paths), " ")))
	fmt.Fprintf(w, "Read %d lines, %d records, %d replication events, %d malformed lines skipped\n\n",
		rep.Lines, rep.Records, rep.Records-rep.UnparsedRecords, rep.MalformedLines)
	for i, ir := range rep.Invariants {
		fmt.Fprintf(w, "[Invariant %d] %s (%s)\n", i+1, invariantTitles[ir.Name], ir.Name)
		for _, ex := range ir.Examples {
			fmt.Fprintf(w, "VIOLATION: %s\n  %s:%d: %s\n", terminalSafe(ex.Detail), terminalSafe(ex.File), ex.Line, terminalSafe(ex.Text))
		}
		switch ir.Status {
		case statusFailed:
			fmt.Fprintf(w, "FAILED: %d violations in %d checks\n\n", ir.Violations, ir.Checked)
		case statusSkipped:
			fmt.Fprintf(w, "SKIPPED: %s\n\n", ir.Reason)
		default:
			fmt.Fprintf(w, "PASSED: "+passedWords[ir.Name]+"\n\n", ir.Checked)
		}
	}
	fmt.Fprintln(w, "=== Verification Complete ===")
	if rep.failed() {
		fmt.Fprintln(w, "Result: FAILED")
	} else {
		fmt.Fprintln(w, "Result: PASSED")
	}
}

// terminalSafe escapes what a terminal would act on instead of printing:
// C0 controls (ESC starts the sequences that recolour, move the cursor or
// set the window title), DEL, C1 controls and bytes that are not UTF-8, as
// \x1b or \u009b. A log line is input from anyone who can reach the broker,
// and the text report is read on a terminal.
func terminalSafe(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789abcdef"
	b := append(make([]byte, 0, len(s)+16), s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f:
			b = append(b, '\\', 'x', hex[s[i]>>4], hex[s[i]&0xf])
		case r >= 0x80 && r <= 0x9f:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

func writeVerifyJSON(w io.Writer, rep *verifyReport) error {
	enc := json.NewEncoder(w)
	return enc.Encode(rep)
}
