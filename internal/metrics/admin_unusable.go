package metrics

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The tables of the admin answers that could not be used: every reason has
// a series, zero until it happens, so that an alert sees the state change.

// unusableTables are the admin half's tables of unusable answers.
func unusableTables(s *poller.Snapshot) []*exposition.Table {
	// The reasons a resource of an answer can have; request_failed is the
	// whole request's, counted in admin_request_errors_total.
	answerReasons := int(poller.UnusableRequestFailed)
	answers := answerErrorRows(s)
	return []*exposition.Table{
		{
			Rows: len(answers),
			Labels: func(row int, values []string) {
				values[0], values[1] = answers[row].why.String(), answers[row].request.String()
			},
			Columns: []exposition.Column{
				{Family: answerErrorsFamily, Value: func(row int) (float64, bool) { return float64(answers[row].n), true }},
			},
		},
		{
			Rows:   int(poller.NumUnusable),
			Labels: func(row int, values []string) { values[0] = poller.Unusable(row).String() },
			Columns: []exposition.Column{
				{Family: minISRUnknownFamily, Value: func(row int) (float64, bool) { return float64(s.MinISR.Unknown[row]), true }},
			},
		},
		{
			Rows:   answerReasons,
			Labels: func(row int, values []string) { values[0] = poller.Unusable(row).String() },
			Columns: []exposition.Column{
				{Family: minISRDefaultFamily, Value: func(row int) (float64, bool) { return float64(s.MinISR.BrokerDefault[row]), true }},
			},
		},
		{
			Rows:   int(poller.NumRefusals),
			Labels: func(row int, values []string) { values[0] = poller.Refusal(row).String() },
			Columns: []exposition.Column{
				{Family: metadataRefusedFamily, Value: func(row int) (float64, bool) { return float64(s.MetadataRefused[row]), true }},
			},
		},
	}
}

// answerErrorRow is one series of admin_answer_errors_total.
type answerErrorRow struct {
	why     poller.Unusable
	request poller.Request
	n       uint64
}

// answerErrorRows are the series of admin_answer_errors_total in series
// order: DescribeConfigs' topics (every reason of a topic config) and the
// partitions of the ListOffsets requests sent (an error for the partition,
// or left out).
func answerErrorRows(s *poller.Snapshot) []answerErrorRow {
	var rows []answerErrorRow
	for why := range poller.UnusableRequestFailed {
		rows = append(rows, answerErrorRow{why, poller.RequestDescribeConfigs, s.MinISR.AnswerErrors[why]})
	}
	for _, req := range []poller.Request{poller.RequestListOffsets, poller.RequestListOffsetsLEO, poller.RequestListOffsetsLSO, poller.RequestListOffsetsTiered} {
		if !s.Sent[req] {
			continue
		}
		for _, why := range []poller.Unusable{poller.UnusableAuthorization, poller.UnusableError, poller.UnusableMissing} {
			rows = append(rows, answerErrorRow{why, req, s.UnusableAnswers[req][why]})
		}
	}
	slices.SortFunc(rows, func(a, b answerErrorRow) int {
		return cmp.Or(strings.Compare(a.why.String(), b.why.String()), strings.Compare(a.request.String(), b.request.String()))
	})
	return rows
}
