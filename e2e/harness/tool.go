package harness

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// FetchTools returns the directory holding Kafka version's command-line tools
// (the kafka-tools jar and its runtime dependencies), downloading them
// through e2e/kafka/fetch-tools.sh (Maven) unless already cached. They are
// apart from the broker's libs/ (FetchLibs): the broker does not need them.
func FetchTools(ctx context.Context, version string) (string, error) {
	return runFetchScript(ctx, "fetch-tools.sh", version, "Kafka "+version+" tools", "")
}

// RunKafkaTool runs one of Kafka's command-line tools by its main class, as
// its bin/kafka-*.sh script would (e.g.
// org.apache.kafka.tools.consumer.group.ConsumerGroupCommand for
// kafka-consumer-groups.sh), with the cluster's own Kafka version, and
// returns its standard output. A tool that exits non-zero is an error that
// carries the tail of its standard error. Tools that need a bootstrap server
// take it in args (Cluster.Bootstrap).
func RunKafkaTool(ctx context.Context, c *Cluster, class string, args ...string) (string, error) {
	tools, err := FetchTools(ctx, c.opts.Version)
	if err != nil {
		return "", err
	}
	// The tools' own resolution only: the broker's libs/ hold other versions
	// of some of the same libraries (log4j), and a class path that mixes two
	// versions of one library fails in ways that have nothing to do with the test.
	jvm := []string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-cp", filepath.Join(tools, "*"), class,
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.java, append(jvm, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", class, strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	return stdout.String(), nil
}

// FetchTieredStorage returns the path of the kafka-storage test jar of
// version, which holds Kafka's own LocalTieredStorage (a remote storage
// manager on a local directory), downloading it through
// e2e/kafka/fetch-tiered.sh (Maven) unless already cached.
func FetchTieredStorage(ctx context.Context, version string) (string, error) {
	return runFetchScript(ctx, "fetch-tiered.sh", version, "the kafka-storage "+version+" test jar", "")
}
