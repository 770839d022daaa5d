// Package tail follows log files by name, like `tail -F`, without losing or
// repeating a line: it is how the exporter reads server.log,
// state-change.log and controller.log while Kafka (log4j2), kubelet or
// logrotate rotate them.
//
// # Why not a library
//
// The candidates were measured (docs/tailer.md has the figures). hpcloud/tail
// is only obtainable as its 2016 v1.0.0 and lost most lines after one
// rotation. nxadm/tail v1.4.11 with CompleteLines and
// inotify passes realistic runs, but it calls os.Exit on stat errors and on
// inotify-limit failures, reopens on rename without draining the old
// descriptor, drops a pending fragment at rotation and keeps a process-wide
// watcher with a reported deadlock. A sidecar must never be exited by a
// library, and its counters must see every line once, so this package
// implements mtail's design in a few hundred lines instead.
//
// # Design
//
// A Follower keeps the file open and reads it to EOF in 128 KiB chunks,
// delivering only complete lines (a trailing '\r' is stripped) and holding
// a partial last line until its newline arrives; a line longer than
// MaxLineBytes is delivered cut and counted. At EOF it stats the path:
//
//   - another file is there (rename+create, delete+create): the old file is
//     drained once more (lines written between our EOF and the rename),
//     every file rotated in between is found among the rolled siblings by
//     inode and read in full, then the new file is read from offset 0;
//   - nothing is there: the old file was renamed and the new one is not
//     created yet; we keep the old descriptor and look again next time.
//     Still nothing after missingGrace, the file was deleted (or renamed
//     for good): it is read to its end, closed, and reported not found;
//   - the same file, smaller than our offset, or whose first bytes changed:
//     copytruncate; we restart at 0. Each chunk is read first and only
//     then checked against the remembered head, so content that replaced the
//     file under us is never delivered at the old offset: copytruncate can
//     lose the lines written after our last read and before the truncation
//     (they are only in the copy), never duplicate any.
//
// Poll does one such pass synchronously; the caller (the exporter's log
// source) calls it every poll interval. Polling alone is enough: a wake-up on
// directory events would save at most one interval of latency. Nothing here
// exits the process or panics on input; the only state shared between
// followers is a cache of rolled files' first-line times (rolled.go).
//
// Only regular files are followed. A directory, named pipe or device at the
// path is refused with a reason (a named pipe would block the opener, a
// device may never end), as are a missing or unreadable file; Stats.Reason
// says which, a warning is logged when it changes, and the file is picked up
// again once it is a readable regular file. Standard input ("-") is read by
// a goroutine of its own, as fast as it comes, and Poll takes what arrived.
//
// Position and PositionStore let a restart resume where the last run
// stopped, also when the file was rotated several times in between: the
// saved file is found among the rolled siblings (server.log.2025-10-16-14,
// server.log.3, 0.log.20251016-155712) by inode and head fingerprint, and
// read on from the saved offset, followed by every newer rolled file and
// the live one. A file is its content: a live file under another inode
// that starts with the saved bytes (a copy, a restore) is read on from the
// saved offset, or from its end when it is shorter. When nothing matches,
// the live file is read from 0 and StartedOver says so, so that the caller
// can skip what it applied before (Position.LastEvent). Which rolled file is newer is decided from the files
// (rolled.go): numbered names run one way for log4j 1.x and the other for
// log4j2. RolledName is the one rule for which names are rolled copies.
// PositionStore also locks its file against a second process and counts
// what it could not load or save.
package tail
