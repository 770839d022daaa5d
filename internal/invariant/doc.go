// Package invariant checks the replication protocol's invariants over a
// stream of logparse events: HW monotonic per leadership, ISR changes
// versioned, no truncation below the HW, no unclean election, the KRaft metadata log's HW never going back, and the rest
// listed by Invariants. Its Checker is the only implementation, shared by
// the offline `verify` command (which reports it) and `serve` (whose
// log-derived state, internal/logstate, turns the same results into
// counters), so the two can never disagree. It imports logparse for the
// events and nothing else of the module.
//
// One file: check.go (the invariants, Result and the Checker).
package invariant
