package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// The position file's own health (--log.position-file): whether the read
// positions are being saved, and what was wrong with them at start.
var (
	positionSaveErrorsFamily = exposition.NewFamily("position_file_save_errors_total",
		"Saves of the position file that failed; the read positions are saved again at the next interval.",
		exposition.Counter).
		WithDoc("Saved every second (when the positions moved) and at shutdown; while saves fail, a restart resumes from the last positions saved (re-reading or " +
			"skipping what was read since). WARN once when saving starts failing, INFO when it works again; a failed final save makes the exit status 1.")
	positionLoadProblemsFamily = exposition.NewFamily("position_file_load_problems_total",
		"Problems found in the position file at start, by kind.",
		exposition.Counter, "problem").
		WithDoc("`damaged_entry`: that log file is read from the beginning; `empty` or `torn` (cut short or garbled): every log file starts as if no position was " +
			"saved (--log.from-beginning decides where). Each is logged at WARN.")
)

// positionFamilies lists the position file's families, for Families.
func positionFamilies() []*exposition.Family {
	return []*exposition.Family{positionSaveErrorsFamily, positionLoadProblemsFamily}
}

// PositionTables renders a position store's health (a TableSource).
func PositionTables(s *tail.PositionStore) exposition.TableSource {
	return func() ([]*exposition.Table, func()) {
		st := s.Stats()
		kinds := tail.LoadProblemKinds
		return []*exposition.Table{
			{Rows: 1, Columns: []exposition.Column{
				{Family: positionSaveErrorsFamily, Value: func(int) (float64, bool) { return float64(st.SaveErrors), true }},
			}},
			{
				Rows:   len(kinds),
				Labels: func(row int, values []string) { values[0] = kinds[row].String() },
				Columns: []exposition.Column{
					{Family: positionLoadProblemsFamily, Value: func(row int) (float64, bool) { return float64(st.LoadProblems[kinds[row]]), true }},
				},
			},
		}, nil
	}
}
