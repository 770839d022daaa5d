// Command gen writes the generated dashboards and the PrometheusRule wrapper
// into the repository.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/dashboards"
)

func main() {
	root := flag.String("root", "..", "repository root")
	flag.Parse()

	files, err := dashboards.Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(*root, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println(path)
	}
}
