package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// serverProperties renders server.properties for one node. Brokers and
// controllers share the cluster-wide settings (the controller is the one that
// applies min.insync.replicas to ELR, default.replication.factor to new
// topics and broker.session.timeout.ms to fencing); only the roles and
// listeners differ. Deviations from Kafka's defaults are explained in the
// package documentation.
func serverProperties(n *Node, voters string, extra map[string]string) string {
	props := map[string]string{
		"node.id":                                  fmt.Sprint(n.ID),
		"process.roles":                            string(n.Role),
		"controller.quorum.voters":                 voters,
		"controller.listener.names":                "CONTROLLER",
		"log.dirs":                                 n.DataDir,
		"num.partitions":                           "1",
		"default.replication.factor":               "3",
		"min.insync.replicas":                      "2",
		"offsets.topic.replication.factor":         "3",
		"offsets.topic.num.partitions":             "3",
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
		"transaction.state.log.num.partitions":     "3",
		"group.initial.rebalance.delay.ms":         "0",
		"replica.lag.time.max.ms":                  "5000",
		"broker.heartbeat.interval.ms":             "1000",
		"broker.session.timeout.ms":                "8000",
		"auto.leader.rebalance.enable":             "false",
		"auto.create.topics.enable":                "false",
		"num.network.threads":                      "2",
		"num.io.threads":                           "4",
		"num.recovery.threads.per.data.dir":        "1",
		"background.threads":                       "4",
	}
	if n.Role == RoleController {
		props["listeners"] = "CONTROLLER://" + n.ControllerAddr
		props["listener.security.protocol.map"] = "CONTROLLER:PLAINTEXT"
	} else {
		props["listeners"] = "PLAINTEXT://" + n.BrokerAddr
		props["advertised.listeners"] = "PLAINTEXT://" + n.BrokerAddr
		props["inter.broker.listener.name"] = "PLAINTEXT"
		props["listener.security.protocol.map"] = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
	}
	if n.cluster != nil && n.cluster.zk != nil && n.Role == RoleBroker {
		zooKeeperBrokerProperties(props, n, n.cluster.zk.ControllerAddr)
	}
	for k, v := range extra {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Written by e2e/harness.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

// LeaderShrinksFirst is the BrokerConfig and ControllerConfig of a cluster
// whose scenarios need a frozen or killed follower dropped by its leader
// ("Shrinking ISR") rather than fenced by the controller: a 12 s session
// outlasts the leader's 7.5 s worst case, where the default 8 s lost the race
// under load (fenced 7.6 s after SIGSTOP, no shrink logged).
var LeaderShrinksFirst = map[string]string{"broker.session.timeout.ms": "12000"}

// Rolling selects how the log files roll.
type Rolling struct {
	// MaxBytes > 0 switches every appender from Kafka's hourly time-based
	// rolling to size-based rolling at this size, to exercise rotation quickly.
	// Both backends then name rolled files like log4j 1.2's
	// RollingFileAppender: server.log.1 is the newest (log4j2 with
	// fileIndex="min"; its default, "max", numbers the other way round).
	MaxBytes int
}

// logFiles are the file appenders of Kafka's default logging configuration.
var logFiles = []struct{ appender, file string }{
	{"KafkaAppender", "server.log"},
	{"StateChangeAppender", "state-change.log"},
	{"ControllerAppender", "controller.log"},
	{"RequestAppender", "kafka-request.log"},
	{"CleanerAppender", "log-cleaner.log"},
}

// log4j2Config renders the XML equivalent of Kafka 4.x config/log4j2.yaml
// (XML, because log4j2's YAML support needs jackson-dataformat-yaml on the
// class path of the exact version it expects).
func log4j2Config(r Rolling, levels map[string]string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by e2e/harness: Kafka 4.x config/log4j2.yaml as XML. -->
<Configuration>
  <Properties>
    <Property name="logPattern">[%d] %p %m (%c)%n</Property>
  </Properties>
  <Appenders>
    <Console name="STDOUT"><PatternLayout pattern="${logPattern}"/></Console>
`)
	for _, f := range logFiles {
		if r.MaxBytes > 0 {
			fmt.Fprintf(&b, `    <RollingFile name="%s" fileName="${sys:kafka.logs.dir}/%s" filePattern="${sys:kafka.logs.dir}/%[2]s.%%i">
      <PatternLayout pattern="${logPattern}"/>
      <SizeBasedTriggeringPolicy size="%d"/>
      <DefaultRolloverStrategy fileIndex="min" min="1" max="1000"/>
    </RollingFile>
`, f.appender, f.file, r.MaxBytes)
			continue
		}
		fmt.Fprintf(&b, `    <RollingFile name="%s" fileName="${sys:kafka.logs.dir}/%s" filePattern="${sys:kafka.logs.dir}/%[2]s.%%d{yyyy-MM-dd-HH}">
      <PatternLayout pattern="${logPattern}"/>
      <TimeBasedTriggeringPolicy modulate="true" interval="1"/>
    </RollingFile>
`, f.appender, f.file)
	}
	b.WriteString(`  </Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="STDOUT"/><AppenderRef ref="KafkaAppender"/></Root>
    <Logger name="kafka" level="INFO"/>
    <Logger name="org.apache.kafka" level="INFO"/>
    <Logger name="kafka.request.logger" level="WARN" additivity="false"><AppenderRef ref="RequestAppender"/></Logger>
    <Logger name="kafka.network.RequestChannel$" level="WARN" additivity="false"><AppenderRef ref="RequestAppender"/></Logger>
    <Logger name="org.apache.kafka.controller" level="INFO" additivity="false"><AppenderRef ref="ControllerAppender"/></Logger>
    <Logger name="org.apache.kafka.storage.internals.log.LogCleaner" level="INFO" additivity="false"><AppenderRef ref="CleanerAppender"/></Logger>
    <Logger name="org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread" level="INFO" additivity="false"><AppenderRef ref="CleanerAppender"/></Logger>
    <Logger name="org.apache.kafka.storage.internals.log.Cleaner" level="INFO" additivity="false"><AppenderRef ref="CleanerAppender"/></Logger>
    <Logger name="state.change.logger" level="INFO" additivity="false"><AppenderRef ref="StateChangeAppender"/></Logger>
`)
	for _, name := range sortedKeys(levels) {
		fmt.Fprintf(&b, "    <Logger name=%q level=%q/>\n", name, levels[name])
	}
	b.WriteString("  </Loggers>\n</Configuration>\n")
	return b.String()
}

// log4jConfig renders Kafka 3.x config/log4j.properties (reload4j).
func log4jConfig(r Rolling, levels map[string]string) string {
	var b strings.Builder
	b.WriteString(`# Written by e2e/harness: Kafka 3.x config/log4j.properties.
log4j.rootLogger=INFO, stdout, kafkaAppender
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
`)
	appenders := map[string]string{
		"server.log": "kafkaAppender", "state-change.log": "stateChangeAppender",
		"controller.log": "controllerAppender", "kafka-request.log": "requestAppender",
		"log-cleaner.log": "cleanerAppender",
	}
	for _, f := range logFiles {
		a := appenders[f.file]
		p := "log4j.appender." + a
		if r.MaxBytes > 0 {
			fmt.Fprintf(&b, "%s=org.apache.log4j.RollingFileAppender\n%[1]s.MaxFileSize=%d\n%[1]s.MaxBackupIndex=1000\n", p, r.MaxBytes)
		} else {
			fmt.Fprintf(&b, "%s=org.apache.log4j.DailyRollingFileAppender\n%[1]s.DatePattern='.'yyyy-MM-dd-HH\n", p)
		}
		fmt.Fprintf(&b, "%s.File=${kafka.logs.dir}/%s\n", p, f.file)
		fmt.Fprintf(&b, "%s.layout=org.apache.log4j.PatternLayout\n%[1]s.layout.ConversionPattern=[%%d] %%p %%m (%%c)%%n\n", p)
	}
	b.WriteString(`log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.kafka.request.logger=WARN, requestAppender
log4j.additivity.kafka.request.logger=false
log4j.logger.kafka.network.RequestChannel$=WARN, requestAppender
log4j.additivity.kafka.network.RequestChannel$=false
log4j.logger.org.apache.kafka.controller=INFO, controllerAppender
log4j.additivity.org.apache.kafka.controller=false
log4j.logger.kafka.controller=TRACE, controllerAppender
log4j.additivity.kafka.controller=false
log4j.logger.kafka.log.LogCleaner=INFO, cleanerAppender
log4j.additivity.kafka.log.LogCleaner=false
log4j.logger.state.change.logger=INFO, stateChangeAppender
log4j.additivity.state.change.logger=false
`)
	for _, name := range sortedKeys(levels) {
		fmt.Fprintf(&b, "log4j.logger.%s=%s\n", name, levels[name])
	}
	return b.String()
}

// writeLoggingConfig writes the node's logging configuration and returns the
// JVM system property that points Kafka at it.
func writeLoggingConfig(dir string, backend logBackend, r Rolling, levels map[string]string) (string, error) {
	if backend == reload4j {
		path := filepath.Join(dir, "log4j.properties")
		if err := os.WriteFile(path, []byte(log4jConfig(r, levels)), 0o644); err != nil {
			return "", err
		}
		return "-Dlog4j.configuration=file:" + path, nil
	}
	path := filepath.Join(dir, "log4j2.xml")
	if err := os.WriteFile(path, []byte(log4j2Config(r, levels)), 0o644); err != nil {
		return "", err
	}
	return "-Dlog4j2.configurationFile=" + path, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
