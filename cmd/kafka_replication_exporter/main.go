// Command kafka_replication_exporter is a sidecar for Apache Kafka brokers: it
// follows the broker's own logs and the admin API and exports replication health
// (ISR vs effective min ISR, high-watermark progress and stalls, truncation below
// the HW, unclean elections) as Prometheus metrics. It also checks broker logs
// offline for replication invariants (`verify`) and prints parsed events
// (`events`). With --probe.config-file, `serve` also answers
// /probe?target=NAME for the clusters that file names, in cluster scope
// (probe_config.go reads the file, probe.go runs a poller per cluster).
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

// cli is the one kingpin application the binary builds, with the values
// its flags and arguments parse into: run parses it, and the README's flag
// tables are generated from its model (docgen_test.go).
type cli struct {
	app      *kingpin.Application
	logCfg   *promslog.Config
	timezone *string
	serve    *serveCommand

	verify       *kingpin.CmdClause
	verifyFormat *string
	verifyFiles  *[]string

	events      *kingpin.CmdClause
	eventsFiles *[]string
}

func newApp() *cli {
	c := &cli{
		app:    kingpin.New(programName, "Prometheus exporter and verifier for Kafka replication health, fed by the broker's own logs and the admin API."),
		logCfg: &promslog.Config{},
	}
	app := c.app
	app.Version(version.Print(programName))
	app.HelpFlag.Short('h')
	promslogflag.AddFlags(app, c.logCfg)
	c.timezone = app.Flag("log.timezone",
		"Time zone of the broker's log timestamps, which carry none (IANA name, e.g. UTC or Europe/Berlin; \"Local\" = this machine's).").Default("Local").String()

	c.serve = newServeCommand(app)

	c.verify = app.Command("verify",
		"Check broker log files offline for replication-protocol invariants. Exit 0 all passed or skipped, 1 a violation, 2 usage or I/O error.")
	c.verifyFormat = c.verify.Flag("format", "Output format: text or json.").Default("text").Enum("text", "json")
	c.verifyFiles = c.verify.Arg("file", "Broker log files (server.log, state-change.log, controller.log, rotated files, .gz; - for stdin). "+
		"Rotated files are read in time order.").Required().Strings()

	c.events = app.Command("events", "Print every replication event parsed from the log files as one JSON object per line.")
	c.eventsFiles = c.events.Arg("file", "Broker log files (- or none for stdin).").Strings()
	return c
}

// run is main without os.Exit, so tests can drive the whole program.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newApp()
	app := c.app
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	exited := false
	app.Terminate(func(int) { exited = true }) // never exit from inside kingpin
	cmd, err := app.Parse(args)
	if exited { // --help or --version printed their text
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v (try --help)\n", programName, err)
		return exitUsage
	}
	loc, err := time.LoadLocation(*c.timezone)
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: --log.timezone: unknown time zone %q\n", programName, *c.timezone)
		return exitUsage
	}
	c.logCfg.Writer = stderr
	logger := promslog.New(c.logCfg)

	switch cmd {
	case c.verify.FullCommand():
		return cmdVerify(stdinArgs(*c.verifyFiles), *c.verifyFormat, loc, stdin, stdout, stderr)
	case c.events.FullCommand():
		files := stdinArgs(*c.eventsFiles)
		if len(files) == 0 {
			files = []string{"-"}
		}
		return cmdEvents(files, loc, stdin, stdout, stderr)
	default:
		return c.serve.run(logger, loc, stderr)
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
