package main

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/invariant"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// cmdEvents prints one JSON object per parsed event: the debugging view of what
// the parser and the invariant checker see, and the format of the golden tests.
func cmdEvents(files []string, loc *time.Location, stdin io.Reader, stdout, stderr io.Writer) int {
	w := bufio.NewWriterSize(stdout, 256<<10)
	checker := invariant.NewChecker()
	var buf []byte
	var res invariant.Result
	_, err := readLogs(files, loc, stdin, true, func(ev *logparse.Event, _ []byte) {
		checker.Observe(ev, &res) // names topics that controller lines give only by id
		buf = logparse.AppendJSON(buf[:0], ev)
		buf = append(buf, '\n')
		_, _ = w.Write(buf) // a bufio.Writer keeps its first error for the Flush below
	})
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: events: %v\n", programName, err)
		return exitUsage
	}
	return exitOK
}
