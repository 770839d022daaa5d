package harness

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestLogFilesOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{
			"hourly",
			[]string{"server.log.2026-11-30-14", "server.log", "server.log.2026-11-30-13"},
			[]string{"server.log.2026-11-30-13", "server.log.2026-11-30-14", "server.log"},
		},
		{
			"size",
			[]string{"server.log.1", "server.log.10", "server.log.2", "server.log"},
			[]string{"server.log.10", "server.log.2", "server.log.1", "server.log"},
		},
		{"no live file yet", []string{"server.log.1"}, []string{"server.log.1"}},
		{"other logs ignored", []string{"server.log", "state-change.log", "server.logx"}, []string{"server.log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n := &Node{LogDir: dir, cluster: &Cluster{opts: Options{Version: "4.1.1"}}}
			got, err := n.LogFiles("server.log")
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = filepath.Base(got[i])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("LogFiles = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestServerProperties(t *testing.T) {
	broker := &Node{ID: 2, Role: RoleBroker, BrokerAddr: "127.0.0.1:1001", DataDir: "/d"}
	props := serverProperties(broker, "101@a:1", map[string]string{"min.insync.replicas": "1", "x.y": "z"})
	for _, want := range []string{
		"node.id=2\n", "process.roles=broker\n", "controller.quorum.voters=101@a:1\n",
		"listeners=PLAINTEXT://127.0.0.1:1001\n", "advertised.listeners=PLAINTEXT://127.0.0.1:1001\n",
		"controller.listener.names=CONTROLLER\n", "log.dirs=/d\n",
		"min.insync.replicas=1\n", "x.y=z\n", "default.replication.factor=3\n", "replica.lag.time.max.ms=5000\n",
	} {
		if !strings.Contains(props, want) {
			t.Errorf("broker server.properties lacks %q:\n%s", want, props)
		}
	}
	if strings.Contains(props, "min.insync.replicas=2") {
		t.Error("an override did not replace the default")
	}

	controller := &Node{ID: 101, Role: RoleController, ControllerAddr: "127.0.0.1:1002", DataDir: "/m"}
	props = serverProperties(controller, "101@127.0.0.1:1002", nil)
	for _, want := range []string{
		"node.id=101\n", "process.roles=controller\n", "listeners=CONTROLLER://127.0.0.1:1002\n",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT\n",
		// The controller applies these cluster-wide defaults itself.
		"min.insync.replicas=2\n", "default.replication.factor=3\n", "broker.session.timeout.ms=8000\n",
	} {
		if !strings.Contains(props, want) {
			t.Errorf("controller server.properties lacks %q:\n%s", want, props)
		}
	}
	for _, unwanted := range []string{"advertised.listeners=", "inter.broker.listener.name=", "PLAINTEXT://"} {
		if strings.Contains(props, unwanted) {
			t.Errorf("controller server.properties has %q, which only a broker may set:\n%s", unwanted, props)
		}
	}
}

func TestLoggingConfigs(t *testing.T) {
	pattern := "[%d] %p %m (%c)%n"
	hourly := log4j2Config(Rolling{}, map[string]string{"kafka.cluster.Partition": "TRACE"})
	for _, want := range []string{
		pattern, `fileName="${sys:kafka.logs.dir}/server.log"`, `filePattern="${sys:kafka.logs.dir}/server.log.%d{yyyy-MM-dd-HH}"`,
		`<Logger name="state.change.logger" level="INFO" additivity="false"><AppenderRef ref="StateChangeAppender"/>`,
		`<Logger name="org.apache.kafka.controller" level="INFO" additivity="false"><AppenderRef ref="ControllerAppender"/>`,
		`<Logger name="kafka.cluster.Partition" level="TRACE"/>`,
	} {
		if !strings.Contains(hourly, want) {
			t.Errorf("log4j2 config lacks %q", want)
		}
	}
	sized := log4j2Config(Rolling{MaxBytes: 4096}, nil)
	if !strings.Contains(sized, `<SizeBasedTriggeringPolicy size="4096"/>`) || !strings.Contains(sized, `fileIndex="min"`) {
		t.Errorf("size-based log4j2 config:\n%s", sized)
	}
	l1 := log4jConfig(Rolling{}, nil)
	for _, want := range []string{
		"ConversionPattern=" + pattern, "log4j.appender.kafkaAppender.DatePattern='.'yyyy-MM-dd-HH",
		"log4j.additivity.state.change.logger=false", "log4j.logger.org.apache.kafka.controller=INFO, controllerAppender",
	} {
		if !strings.Contains(l1, want) {
			t.Errorf("log4j config lacks %q", want)
		}
	}
	if s := log4jConfig(Rolling{MaxBytes: 4096}, nil); !strings.Contains(s, "kafkaAppender=org.apache.log4j.RollingFileAppender\nlog4j.appender.kafkaAppender.MaxFileSize=4096") {
		t.Errorf("size-based log4j config:\n%s", s)
	}
}

func TestRandomClusterID(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{21}$`)
	for range 100 {
		id, err := randomClusterID()
		if err != nil || !re.MatchString(id) {
			t.Fatalf("randomClusterID() = %q, %v", id, err)
		}
	}
}

func TestZooKeeperProperties(t *testing.T) {
	c := &Cluster{}
	c.zk = &Node{ID: zooKeeperID, Role: RoleZooKeeper, ControllerAddr: "127.0.0.1:2181", DataDir: "/zk", cluster: c}
	broker := &Node{ID: 2, Role: RoleBroker, BrokerAddr: "127.0.0.1:1001", DataDir: "/d", cluster: c}
	props := serverProperties(broker, "", nil)
	for _, want := range []string{"broker.id=2\n", "zookeeper.connect=127.0.0.1:2181\n", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT\n"} {
		if !strings.Contains(props, want) {
			t.Errorf("ZooKeeper-mode broker lacks %q:\n%s", want, props)
		}
	}
	for _, kraft := range []string{"process.roles", "controller.quorum.voters", "controller.listener.names", "node.id"} {
		if strings.Contains(props, kraft+"=") {
			t.Errorf("ZooKeeper-mode broker has %s:\n%s", kraft, props)
		}
	}
	zk := zooKeeperProperties(c.zk)
	for _, want := range []string{"clientPort=2181\n", "dataDir=/zk\n", "admin.enableServer=false\n"} {
		if !strings.Contains(zk, want) {
			t.Errorf("zookeeper.properties lacks %q:\n%s", want, zk)
		}
	}
	if _, err := Start(context.Background(), Options{Version: "4.4.0", ZooKeeper: true, Dir: t.TempDir(), LibsDir: t.TempDir()}); err == nil {
		t.Error("ZooKeeper mode on Kafka 4.4.0 started")
	}
}
