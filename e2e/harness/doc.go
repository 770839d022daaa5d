// Package harness runs a real Apache Kafka cluster for end-to-end tests: three
// broker-only KRaft nodes (ids 1, 2, 3) beside a dedicated controller quorum
// (ids 101…, one node by default) on loopback, started from the jars of a
// Maven-resolved Kafka distribution (see e2e/kafka/fetch.sh), logging exactly
// like a stock installation (server.log, state-change.log, controller.log with
// Kafka's default pattern), so the logs it produces are the logs users see.
//
// It is usable from tests (StartT) and from ordinary programs (Start).
//
// Options.ZooKeeper runs a ZooKeeper-mode cluster instead (Kafka ≤ 3.9): the
// same three brokers, with zookeeper.connect and no process.roles, beside one
// standalone ZooKeeper server (node 100, QuorumPeerMain from Kafka's own jars,
// its AdminServer off so it does not take port 8080,
// zookeeper.session.timeout.ms=6000 so a killed broker's leaderships move
// about as soon as KRaft fencing moves them). The controller is then one of
// the brokers (ControllerID).
//
// The node configuration follows a plain production setup
// (min.insync.replicas=2, default.replication.factor=3, internal topics with
// RF 3 / min ISR 2), with these deliberate changes to keep scenarios short and
// deterministic on a small machine:
//
//   - replica.lag.time.max.ms=5000 (default 30000): a paused or stopped
//     follower leaves the ISR within seconds.
//   - broker.heartbeat.interval.ms=1000, broker.session.timeout.ms=8000
//     (defaults 2000/9000): a killed broker is fenced sooner. The fence (7–8 s
//     after the pause) and the leader's own shrink (the lag check runs every
//     replica.lag.time.max.ms/2, so 5–7.5 s) then race; a scenario that needs
//     the leader's shrink sets LeaderShrinksFirst.
//   - auto.leader.rebalance.enable=false: no preferred-leader election moves
//     leaders behind a scenario's back.
//   - auto.create.topics.enable=false: a typo in a test is an error, not a topic.
//   - offsets/transaction-state topics with 3 partitions (default 50), small
//     thread pools, group.initial.rebalance.delay.ms=0: less work on 2 cores.
//   - JVM: -Xmx512m for a broker, -Xmx256m for a controller, SerialGC and C1
//     only (-XX:TieredStopAtLevel=1): the JVMs start faster and compete less
//     for CPU.
//   - One controller, not three: the scenarios stop brokers only, so the
//     quorum never needs to survive a loss, and a JVM is saved on 2 cores.
//
// Every process runs in its own process group with Pdeathsig=SIGKILL, so no
// broker outlives the program that started it, even when a test panics or
// times out.
package harness
