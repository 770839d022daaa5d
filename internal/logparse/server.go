package logparse

import "bytes"

// The broker's lines about itself: a log directory it stopped serving
// (kafka.server.ReplicaManager), and the process starting (BrokerServer,
// KafkaServer), after which every directory is served again or found
// failed anew.
//
//	WARN [ReplicaManager broker=3] Stopping serving replicas in dir /data/b with uuid Optional[7E_aR-ZDcublVgBOR3kSyw] because the log directory has failed.
//	WARN [ReplicaManager broker=3] Stopping serving replicas in dir /data/b
//	INFO [BrokerServer id=3] Transition from SHUTDOWN to STARTING
//	INFO starting (kafka.server.KafkaServer)
//
// The first form is KRaft's since directories have ids (3.7), the second
// older brokers' (INFO before the level was raised). ReplicaManager logs it
// once per failure, before it takes the replicas offline and before a
// broker whose every directory failed halts. A directory that fails while
// the broker starts (before ReplicaManager runs) has no such line.

const (
	stoppingDir  = "] Stopping serving replicas in dir "
	dirWithUUID  = " with uuid "
	brokerServer = "[BrokerServer id="
	kraftStart   = "] Transition from SHUTDOWN to STARTING"
	zkServer     = "kafka.server.KafkaServer"
)

// logDirStopped parses the part of a "[ReplicaManager broker=N] …" message
// after the broker id: "] Stopping serving replicas in dir <dir>…".
func (p *Parser) logDirStopped(ev *Event, m []byte) bool {
	dir, ok := cut(m, stoppingDir)
	if !ok {
		return false
	}
	if i := bytes.Index(dir, []byte(dirWithUUID)); i >= 0 {
		dir = dir[:i]
	}
	dir = bytes.TrimRight(dir, " ")
	if len(dir) == 0 {
		return false
	}
	ev.Dir = p.intern(dir)
	ev.Type = LogDirOffline
	return true
}

// brokerStart parses "[BrokerServer id=N] Transition from SHUTDOWN to
// STARTING" and ZooKeeper mode's bare "starting" of kafka.server.KafkaServer.
func (p *Parser) brokerStart(ev *Event, m, logger []byte) bool {
	if rest, ok := cut(m, brokerServer); ok {
		if ev.Broker, rest, ok = id(rest); !ok || !bytes.Equal(rest, []byte(kraftStart)) {
			return false
		}
	} else if string(m) != "starting" || string(logger) != zkServer {
		return false
	}
	ev.Type = BrokerStart
	return true
}
