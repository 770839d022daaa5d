package collector

import "github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"

// The tables of the admin answers that could not be used: every reason has
// a series, zero until it happens, so that an alert sees the state change.

// unusableTables are the admin half's tables of unusable answers.
func unusableTables(s *admin.Snapshot) []*Table {
	// The reasons a resource of an answer can have; request_failed is the
	// whole request's, counted in admin_request_errors_total.
	answerReasons := int(admin.UnusableRequestFailed)
	return []*Table{
		{
			Rows: answerReasons,
			Labels: func(row int, values []string) {
				values[0], values[1] = admin.Unusable(row).String(), admin.RequestDescribeConfigs.String()
			},
			Columns: []Column{
				{answerErrorsFamily, func(row int) (float64, bool) { return float64(s.MinISR.AnswerErrors[row]), true }},
			},
		},
		{
			Rows:   int(admin.NumUnusable),
			Labels: func(row int, values []string) { values[0] = admin.Unusable(row).String() },
			Columns: []Column{
				{minISRUnknownFamily, func(row int) (float64, bool) { return float64(s.MinISR.Unknown[row]), true }},
			},
		},
		{
			Rows:   answerReasons,
			Labels: func(row int, values []string) { values[0] = admin.Unusable(row).String() },
			Columns: []Column{
				{minISRDefaultFamily, func(row int) (float64, bool) { return float64(s.MinISR.BrokerDefault[row]), true }},
			},
		},
		{
			Rows:   int(admin.NumRefusals),
			Labels: func(row int, values []string) { values[0] = admin.Refusal(row).String() },
			Columns: []Column{
				{metadataRefusedFamily, func(row int) (float64, bool) { return float64(s.MetadataRefused[row]), true }},
			},
		},
	}
}
