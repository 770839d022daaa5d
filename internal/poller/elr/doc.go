// Package elr reads each partition's Eligible Leader Replicas (ELR) and
// last-known ELR (KIP-966) with DescribeTopicPartitions (API key 75, brokers
// from Kafka 3.7). It uses franz-go beside the poller's sarama client only
// because sarama does not implement that request; the connection takes the
// same seeds, TLS and SASL settings, and one Read pins every page to the one
// broker whose ApiVersions it checked, following the response cursor so a
// large cluster costs one request per ResponsePartitionLimit partitions.
// Absence is not an error: a broker without API 75 makes Read return
// ErrUnsupported, and a cluster whose eligible.leader.replicas.version feature
// is not finalized at 1 or above (every 3.x, 4.0 by default, or a cluster that
// turned ELR off) gives a Result with Enabled false and no partitions, so the
// caller exports no ELR series and counts no error in either case.
package elr
