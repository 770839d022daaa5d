// Command kfake serves an in-memory Kafka (franz-go's kfake) with many
// partitions in its own process, so bench/admin-cost.sh can measure the
// exporter's admin half alone: its CPU, its RSS and its refresh time, none of
// them mixed with the fake cluster's own (the in-process benchmarks cannot
// separate them).
//
//	go run ./e2e/cmd/kfake --topics 100 --partitions 1000
//
// It prints the brokers' addresses, comma-separated, on one line and serves
// until SIGINT/SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	topics := flag.Int("topics", 100, "topics to create")
	partitions := flag.Int("partitions", 1000, "partitions per topic")
	brokers := flag.Int("brokers", 3, "brokers (the replication factor too)")
	flag.Parse()
	if err := run(*topics, *partitions, *brokers); err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
}

// run serves the fake cluster until SIGINT or SIGTERM.
func run(topics, partitions, brokers int) error {
	c, err := kfake.NewCluster(kfake.NumBrokers(brokers))
	if err != nil {
		return err
	}
	defer c.Close()
	for i := range topics {
		if err := c.CreateTopic(fmt.Sprintf("topic-%03d", i), int32(partitions), map[string]string{"min.insync.replicas": "2"}); err != nil {
			return err
		}
	}
	fmt.Println(strings.Join(c.ListenAddrs(), ","))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return nil
}
