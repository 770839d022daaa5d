// Command kafka_replication_exporter is a sidecar for Apache Kafka brokers: it
// follows the broker's own logs and the admin API and exports replication health
// (ISR vs effective min ISR, high-watermark progress and stalls, truncation below
// the HW, unclean elections) as Prometheus metrics. It also checks broker logs
// offline for replication invariants (`verify`) and prints parsed events
// (`events`).
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
)

const programName = "kafka_replication_exporter"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes: 0 success, 1 a verify violation or a runtime failure, 2 bad usage
// or unreadable input.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
)

// run is main without os.Exit, so tests can drive the whole program.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := kingpin.New(programName, "Prometheus exporter and verifier for Kafka replication health, fed by the broker's own logs and the admin API.")
	app.Version(version.Print(programName))
	app.HelpFlag.Short('h')
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	app.Terminate(nil) // never exit from inside kingpin; --help/--version are handled below

	logCfg := &promslog.Config{}
	promslogflag.AddFlags(app, logCfg)
	timezone := app.Flag("log.timezone", "Time zone of the broker's log timestamps, which carry none (IANA name, e.g. UTC or Europe/Berlin; \"Local\" = this machine's).").Default("Local").String()

	serve := newServeCommand(app)

	verifyCmd := app.Command("verify", "Check broker log files offline for replication-protocol invariants. Exit 0 all passed or skipped, 1 a violation, 2 usage or I/O error.")
	verifyFormat := verifyCmd.Flag("format", "Output format: text or json.").Default("text").Enum("text", "json")
	verifyFiles := verifyCmd.Arg("file", "Broker log files (server.log, state-change.log, controller.log, rotated files, .gz; - for stdin). Rotated files are read in time order.").Required().Strings()

	eventsCmd := app.Command("events", "Print every replication event parsed from the log files as one JSON object per line.")
	eventsFiles := eventsCmd.Arg("file", "Broker log files (- or none for stdin).").Strings()

	exited := false
	app.Terminate(func(int) { exited = true })
	cmd, err := app.Parse(args)
	if exited { // --help or --version printed their text
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v (try --help)\n", programName, err)
		return exitUsage
	}
	loc, err := time.LoadLocation(*timezone)
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: --log.timezone: unknown time zone %q\n", programName, *timezone)
		return exitUsage
	}
	logCfg.Writer = stderr
	logger := promslog.New(logCfg)

	switch cmd {
	case verifyCmd.FullCommand():
		return cmdVerify(stdinArgs(*verifyFiles), *verifyFormat, loc, stdin, stdout, stderr)
	case eventsCmd.FullCommand():
		files := stdinArgs(*eventsFiles)
		if len(files) == 0 {
			files = []string{"-"}
		}
		return cmdEvents(files, loc, stdin, stdout, stderr)
	default:
		return serve.run(logger, loc, stderr)
	}
}

func cmdVerify(files []string, format string, loc *time.Location, stdin io.Reader, stdout, stderr io.Writer) int {
	rep, err := runVerify(files, loc, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: verify: %v\n", programName, err)
		return exitUsage
	}
	if format == "json" {
		if err := writeVerifyJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "%s: verify: %v\n", programName, err)
			return exitUsage
		}
	} else {
		writeVerifyText(stdout, files, rep)
	}
	if rep.failed() {
		return exitViolation
	}
	return exitOK
}

// stdinArgs restores "-" (stdin): kingpin's lexer hands a lone "-" argument over
// as an empty string.
func stdinArgs(files []string) []string {
	for i, f := range files {
		if f == "" {
			files[i] = "-"
		}
	}
	return files
}
