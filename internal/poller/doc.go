// Package poller polls the Kafka admin API beside one broker and keeps the
// result as plain data. It owns the admin half of the sidecar: its flags
// (Config, with TLS and SASL), the connections to the brokers, the refresh
// that asks Metadata, DescribeConfigs and ListOffsets of each broker, plus
// each partition's ELR (package elr), the reassignments in progress, the
// brokers' failed log directories (fetch_logdirs.go) and, opt-in, the
// consumer groups' committed offsets (fetch_groups.go), the share groups'
// start offsets (fetch_share_groups.go) and the last stable
// offsets (fetch_lso.go, build_lso.go) and tiered storage (fetch_tiering.go,
// build_tiering.go), the KRaft metadata quorum from the
// one sidecar that speaks for the cluster (quorum.go), the
// high-watermark history that stall and regression detection need, the join
// with this broker's log-derived state (LogStore, the one way into the log
// half), and the opt-in switch of the broker's partition logger. It exports
// a Poller, whose Snapshot is the immutable result of the last refresh:
// topics and partitions with their replicas, ISR, effective min ISR, leader,
// offsets, lags and stall state, plus the poller's own counters. Rendering
// those as metrics is package metrics's job, so this package never imports
// a Prometheus library.
//
// Each file uses only the files listed before it:
//
//	snapshot.go      the result: Snapshot, Topic, Partition
//	answers.go       what could not be used: Refusal, Unusable, MinISRStatus
//	snapshot_groups.go  the result's consumer groups
//	snapshot_quorum.go  the result's metadata quorum
//	snapshot_tiering.go the result's tiered storage
//	track.go         the high-watermark history (stall, regression)
//	hwhistory.go     the high-watermark readings behind lag in seconds
//	logstore.go      LogStore and the join of Metadata with the log's view
//	scram.go         SCRAM for sarama
//	groups_config.go the consumer-side flags (groups, last stable offset)
//	tiering_config.go the tiered-storage flags
//	config.go        the flags and the client configurations
//	brokers.go       one connection per broker, a request with a deadline
//	apiversions.go   ApiVersions over franz-go, for reads only some brokers take
//	whoami.go        which advertised broker is a --kafka.server
//	round.go         one refresh's dealings with the brokers
//	loglevel.go      --kafka.partition-log-level
//	metadata.go      stage 1: Metadata
//	plan.go          stage 2: what to ask whom
//	plan_refuse.go   stage 2: Metadata entries refused (name rule, duplicates)
//	fetch_*.go       stage 3: one fetcher per read, each with its requests
//	minisr.go        min ISR: its DescribeConfigs and each topic's value, and what is unknown
//	quorum.go        the metadata quorum: its read, its lags and HW regressions
//	fetch_tiering.go tiered storage: ListOffsets -5 and -4 of the tiered topics' leaders (after minisr.go's answer)
//	fetch_share_groups.go share groups: ListGroups and DescribeShareGroupOffsets (after fetch_groups.go's batch and logUnread)
//	fetch.go         stage 3: the fetchers, run concurrently
//	build.go         stage 4: the snapshot
//	build_groups.go  stage 4: the consumer and share groups of the snapshot
//	build_lso.go     stage 4: each LSO against its HW, and since when it holds read_committed consumers back
//	build_tiering.go stage 4: each tiered partition's lag, and whether a stuck HW or LSO stalls its tiering
//	refresh.go       one refresh: the stages in order
//	admin.go         the Poller: Run, Snapshot
package poller
