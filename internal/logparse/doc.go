// Package logparse turns Kafka broker log records into typed replication events.
//
// It is pure: bytes in, events out. It does no I/O, keeps no globals and
// exports no metrics, so the same code serves the offline `verify` command,
// the live sidecar and the golden tests. The line formats it understands
// (Kafka 2.8 → 4.4) are pinned by the golden files in testdata/ (synthetic per version and layout,
// and real 3.9.1 / 4.1.1 broker output from the e2e scenarios).
//
// It imports nothing of the module. Package invariant checks the
// replication invariants over its events.
//
// The files, in reading order (the parser and its per-logger files call
// each other, so this is an order for reading, not a strict dependency
// order): scan.go (byte scanning helpers), event.go (Type, Event),
// layout.go, ecs.go and timestamp.go (line layouts, log4j2's EcsLayout JSON
// records, their timestamps), envelope.go and json.go (container runtime
// framing, JSON output), splitter.go (physical lines into records),
// linetime.go (a line's time), parser.go (records into events, dispatching
// by logger), then one file per logger: server.go, statechange.go,
// controller.go, quorum.go (the metadata log's Raft client and the
// controller's view of its leader), partition.go, truncation.go, produce.go; and merge.go
// (FileClock: one file's event times fit to merge).
package logparse
