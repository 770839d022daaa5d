// Command genlog writes a synthetic Kafka broker log to stdout, for
// benchmarks and manual runs:
//
//	go run ./internal/genlog/cmd/genlog -lines 4000000 -seed 7 > /tmp/genlog.log
//
// With -manifest it also writes what the log holds (events per type, each
// invariant's expected outcome) as JSON.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/genlog"
)

func main() {
	var o genlog.Options
	flag.IntVar(&o.Lines, "lines", 100_000, "physical lines to write")
	flag.IntVar(&o.Partitions, "partitions", 12, "partitions the broker leads")
	flag.Uint64Var(&o.Seed, "seed", 1, "the same seed gives the same log")
	flag.IntVar(&o.Violations, "violations", 3, "injected violations of each kind")
	broker := flag.Int("broker", 1, "the broker's id, 1 to 3")
	manifest := flag.String("manifest", "", "write the manifest as JSON to this file")
	flag.Parse()
	o.Broker = int32(*broker)
	if err := run(o, *manifest); err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
}

func run(o genlog.Options, manifestPath string) error {
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	m, err := genlog.Write(w, o)
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if manifestPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(manifestPath, append(b, '\n'), 0o644)
}
