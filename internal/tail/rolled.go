package tail

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rolled files are the rotated copies of a followed file: Kafka's
// server.log.2025-10-16-14 (daily/hourly), server.log.3 (size-based) and
// kubelet's 0.log.20251016-155712. Numbered names mean opposite things to
// different writers: log4j 1.x (Kafka 3.x with reload4j), logrotate and
// log4j2 with fileIndex="min" make .1 the newest, log4j2's default
// (fileIndex="max", Kafka 4.x) makes .1 the oldest. So the order is decided
// from the files themselves, by orderRolled, which both the follower and
// `verify` use. Compressed copies cannot be followed and are left out, as are
// temporary files.

// compressedSuffixes are the extensions of rolled copies that were
// compressed: the follower cannot follow them, verify reads the gzip ones.
var compressedSuffixes = []string{".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4"}

// sameMtime is how close two modification times must be to say nothing about
// which file was written last: filesystems with one-second timestamps, and
// copies or restores that stamp every file in one go.
const sameMtime = time.Second

// firstLineSearch is how much of a file's beginning is searched for the first
// line that carries a timestamp.
const firstLineSearch = 4 << 10

type rolledFile struct {
	name string
	info os.FileInfo
	// open reads the file's content; nil means os.Open. verify passes one
	// that decompresses.
	open func(string) (io.ReadCloser, error)
	// lineTime reads a line's timestamp; nil leaves the content unread.
	lineTime LineTime

	index    int  // the number of a size-rolled name (server.log.3)
	numbered bool // index is set: the name is a plain number
	nameRank int  // place in name order, the last tie-breaker

	firstTime  time.Time // timestamp of the first log line, zero if unknown
	firstKnown bool      // firstTime was looked for
}

// newRolledFile describes name, whose suffix is what the roller added to
// the live file's name.
func newRolledFile(name, suffix string, info os.FileInfo, open func(string) (io.ReadCloser, error), lineTime LineTime) *rolledFile {
	rf := &rolledFile{name: name, info: info, open: open, lineTime: lineTime}
	rf.index, rf.numbered = rolledIndex(suffix)
	return rf
}

// RolledName is the one rule for which names are rotated copies of a log
// file: the live file's name, a dot, and a suffix the roller added that
// starts with a digit and holds only digits, '-', '_' and '.'
// (server.log.3, server.log.2025-10-16-14, server.log.2025-10-16.1,
// kubelet's 0.log.20251016-155712), optionally followed by a compression
// extension (server.log.3.gz). It returns the live file's path (the shortest
// that fits), the suffix and whether the copy is compressed. Anything else
// (server.log.tmp, server.log.old) is not a rolled copy.
func RolledName(path string) (live, suffix string, compressed, ok bool) {
	dir, file := filepath.Split(path)
	for i := 1; i < len(file); i++ {
		if file[i] != '.' {
			continue
		}
		if suffix, compressed, ok = rolledSuffix(file, file[:i]); ok {
			return dir + file[:i], suffix, compressed, true
		}
	}
	return "", "", false, false
}

// rolledSuffix reports whether file is a rolled copy of the file named
// base (both without a directory), and what the roller added.
func rolledSuffix(file, base string) (suffix string, compressed, ok bool) {
	suffix, ok = strings.CutPrefix(file, base+".")
	if !ok {
		return "", false, false
	}
	for _, ext := range compressedSuffixes {
		if trimmed, cut := strings.CutSuffix(suffix, ext); cut {
			suffix, compressed = trimmed, true
			break
		}
	}
	if suffix == "" || !isDigit(suffix[0]) {
		return "", false, false
	}
	for i := 0; i < len(suffix); i++ {
		if c := suffix[i]; !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return "", false, false
		}
	}
	return suffix, compressed, true
}

// rolledNames lists the rolled siblings of path that can be followed (not
// compressed), in name order.
func rolledNames(path string) []string {
	var names []string
	for _, sib := range rolledSiblingNames(path) {
		names = append(names, sib.name)
	}
	slices.SortFunc(names, naturalCompare)
	return names
}

type rolledSibling struct{ name, suffix string }

// rolledSiblingNames lists the rolled siblings of path that are not
// compressed, in directory order.
func rolledSiblingNames(path string) []rolledSibling {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	entries, err := d.Readdirnames(-1) // unsorted: the caller orders them
	d.Close()
	if err != nil {
		return nil
	}
	base := filepath.Base(path)
	var names []rolledSibling
	for _, e := range entries {
		if suffix, compressed, ok := rolledSuffix(e, base); ok && !compressed {
			names = append(names, rolledSibling{filepath.Join(dir, e), suffix})
		}
	}
	return names
}

// rolledSiblings stats the rolled siblings of path and returns the regular
// files among them, oldest first.
func rolledSiblings(path string, lineTime LineTime) []*rolledFile {
	sibs := rolledSiblingNames(path)
	all := make([]*rolledFile, len(sibs))
	inParallel(len(sibs), func(from, to int) {
		for i := from; i < to; i++ {
			if fi, err := os.Stat(sibs[i].name); err == nil && fi.Mode().IsRegular() {
				all[i] = newRolledFile(sibs[i].name, sibs[i].suffix, fi, nil, lineTime)
			}
		}
	})
	files := slices.DeleteFunc(all, func(rf *rolledFile) bool { return rf == nil })
	firstTimes.recall(path, files)
	orderRolled(files)
	firstTimes.remember(path, files)
	return files
}

// firstTimes remembers, per followed path, the first-line times of the
// rolled files read at earlier rotations: a rolled file is not written
// again, so a rotation opens only the files it has not seen. Each rotation
// keeps only the files still there, so it holds at most one entry per
// rolled file on disk.
var firstTimes = firstTimeCache{byPath: map[string]map[fileKey]time.Time{}}

type firstTimeCache struct {
	mu     sync.Mutex
	byPath map[string]map[fileKey]time.Time
}

// fileKey identifies a rolled file's content whatever its name: log4j 1.x
// renames every rolled file at every rotation. The name stands in for the
// inode where the platform has none.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
	name     string
}

func keyOf(rf *rolledFile) fileKey {
	k := fileKey{size: rf.info.Size(), mtime: rf.info.ModTime().UnixNano()}
	if k.dev, k.ino = fileID(rf.info); k.ino == 0 {
		k.name = rf.name
	}
	return k
}

func (c *firstTimeCache) recall(path string, files []*rolledFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	known := c.byPath[path]
	if known == nil {
		return
	}
	for _, rf := range files {
		if t, ok := known[keyOf(rf)]; ok {
			rf.firstTime, rf.firstKnown = t, true
		}
	}
}

func (c *firstTimeCache) remember(path string, files []*rolledFile) {
	known := make(map[fileKey]time.Time)
	for _, rf := range files {
		if rf.firstKnown {
			known[keyOf(rf)] = rf.firstTime
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(known) == 0 {
		delete(c.byPath, path)
		return
	}
	c.byPath[path] = known
}

// inParallel calls fn over [0, n) in a few chunks at once: the stat and the
// first bytes of many thousand rolled files are system calls that wait on
// the filesystem, not on each other.
func inParallel(n int, fn func(from, to int)) {
	const minChunk, workers = 512, 4
	if n < 2*minChunk {
		fn(0, n)
		return
	}
	chunk := max(minChunk, (n+workers-1)/workers)
	var wg sync.WaitGroup
	for from := 0; from < n; from += chunk {
		wg.Go(func() { fn(from, min(from+chunk, n)) })
	}
	wg.Wait()
}

// rolledAfter finds the rolled sibling of path that match reports as ours
// and returns it with every sibling written after it, oldest first.
func rolledAfter(path string, lineTime LineTime, match func(os.FileInfo) bool) (found *rolledFile, newer []*rolledFile, ok bool) {
	files := rolledSiblings(path, lineTime)
	for i, rf := range files {
		if match(rf.info) {
			return rf, files[i+1:], true
		}
	}
	return nil, nil, false
}

// SortRolled sorts names, rotated copies of one log file (server.log.1,
// server.log.2025-10-16-14, ...; see RolledName), oldest first, the way the
// follower orders them when it resumes. open reads a file's content (verify
// passes one that decompresses); nil means os.Open. lineTime reads a line's
// timestamp, as Options.LineTime. A file that cannot be read sorts by its
// name alone.
func SortRolled(names []string, open func(string) (io.ReadCloser, error), lineTime LineTime) {
	files := make([]*rolledFile, len(names))
	for i, name := range names {
		fi, _ := os.Stat(name)
		_, suffix, _, _ := RolledName(name)
		files[i] = newRolledFile(name, suffix, fi, open, lineTime)
	}
	orderRolled(files)
	for i, rf := range files {
		names[i] = rf.name
	}
}

// orderRolled sorts the rolled copies of one file oldest first. Names that
// carry a date or a timestamp (server.log.2025-10-16-14,
// 0.log.20251016-155712) sort as they read: the roller wrote them once, while
// a copy or a restore can change every mtime. When plain numbers are among
// the names, the evidence, in the order it is trusted, is:
//
//  1. modification time: a rolled file is not written after it rolls, so
//     the file rolled last was written last;
//  2. among files whose mtimes are within sameMtime of each other, the
//     timestamp of their first log line (the caller's LineTime: every
//     layout the parser knows, inside any container envelope);
//  3. then the names: a plain number follows the convention the other
//     files show (pairs told apart by 1 or 2), or log4j 1.x's (.1 newest)
//     when nothing shows one; dated names come before numbered ones.
//
// It costs O(n log n) comparisons, and it opens only files whose mtimes do
// not tell them apart: a rotation is paid per rotation, with as many
// siblings as a retention policy keeps.
func orderRolled(files []*rolledFile) {
	slices.SortFunc(files, func(a, b *rolledFile) int {
		// Two numbers after the same name read as their values: a shortcut.
		if a.numbered && b.numbered && a.index != b.index {
			return a.index - b.index
		}
		return naturalCompare(a.name, b.name)
	})
	if !slices.ContainsFunc(files, func(rf *rolledFile) bool { return rf.numbered }) {
		return
	}
	// Later sorts break their ties by the name order (stable sorts cost a
	// log factor more).
	for i, rf := range files {
		rf.nameRank = i
	}
	slices.SortFunc(files, func(a, b *rolledFile) int {
		if c := modTime(a).Compare(modTime(b)); c != 0 {
			return c
		}
		return a.nameRank - b.nameRank
	})

	// Groups of files whose mtimes do not tell them apart: chains of
	// neighbors closer than sameMtime.
	var groups [][]*rolledFile
	for i, start := 1, 0; i <= len(files); i++ {
		if i == len(files) || modTime(files[i]).Sub(modTime(files[i-1])) >= sameMtime {
			groups = append(groups, files[start:i])
			start = i
		}
	}
	var unknown []*rolledFile
	for _, g := range groups {
		if len(g) > 1 {
			unknown = append(unknown, g...)
		}
	}
	inParallel(len(unknown), func(from, to int) {
		var head []byte // one buffer for the first bytes of a chunk's files
		for _, rf := range unknown[from:to] {
			head = rf.readFirstTime(head)
		}
	})
	newestIsOne := numberingNewestIsOne(groups)
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		byContent := true
		for _, rf := range g {
			byContent = byContent && !rf.firstTime.IsZero()
		}
		slices.SortFunc(g, func(a, b *rolledFile) int {
			if byContent {
				if c := a.firstTime.Compare(b.firstTime); c != 0 {
					return c
				}
			}
			if c := compareRolledNames(a, b, newestIsOne); c != 0 {
				return c
			}
			return a.nameRank - b.nameRank
		})
	}
}

// numberingNewestIsOne decides which way plain numbers run, from the pairs
// of numbered files whose mtimes (different groups) or first lines tell
// which is newer: each such pair votes for the convention it shows. Without
// a vote either way it is log4j 1.x's convention, also logrotate's and
// log4j2's with fileIndex="min".
func numberingNewestIsOne(groups [][]*rolledFile) bool {
	// Across groups, the group's place is the age: groups are in mtime order.
	var across []ranked
	for gi, g := range groups {
		for _, rf := range g {
			if rf.numbered {
				across = append(across, ranked{n: rf.index, rank: int64(gi)})
			}
		}
	}
	votes := risingPairs(across) // > 0: a higher number is newer
	// Within a group, the first lines' times are the age where both are known.
	var within []ranked
	for _, g := range groups {
		within = within[:0]
		for _, rf := range g {
			if rf.numbered && !rf.firstTime.IsZero() {
				within = append(within, ranked{n: rf.index, rank: rf.firstTime.UnixNano()})
			}
		}
		votes += risingPairs(within)
	}
	return votes <= 0
}

// ranked is a numbered file and its age: a lower rank is older, and equal
// ranks say nothing about which is older.
type ranked struct {
	n    int
	rank int64
}

// risingPairs counts, over every pair of rs whose ranks differ, +1 when the
// older one has the lower number and -1 when it has the higher; pairs with
// equal numbers count nothing. It is the numerator of Kendall's tau,
// computed in O(n log n) with a Fenwick tree over the numbers: each file is
// compared with the count of older files below and above its number. It
// reorders rs.
func risingPairs(rs []ranked) int {
	if len(rs) < 2 {
		return 0
	}
	ns := make([]int, len(rs))
	for i, r := range rs {
		ns[i] = r.n
	}
	slices.Sort(ns)
	ns = slices.Compact(ns)
	slices.SortFunc(rs, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	// tree is a Fenwick tree of the older files counted per number; the
	// number ns[i] is at tree index i+1.
	tree := make([]int, len(ns)+1)
	countUpTo := func(pos int) int { // older files numbered below ns[pos]
		c := 0
		for i := pos; i > 0; i -= i & -i {
			c += tree[i]
		}
		return c
	}
	votes, older := 0, 0
	for start := 0; start < len(rs); {
		end := start + 1
		for end < len(rs) && rs[end].rank == rs[start].rank {
			end++
		}
		// Files of one rank are compared with the older ones only, not
		// with each other.
		for _, r := range rs[start:end] {
			pos, _ := slices.BinarySearch(ns, r.n)
			below := countUpTo(pos)
			above := older - countUpTo(pos+1)
			votes += below - above
		}
		for _, r := range rs[start:end] {
			pos, _ := slices.BinarySearch(ns, r.n)
			for i := pos + 1; i < len(tree); i += i & -i {
				tree[i]++
			}
		}
		older += end - start
		start = end
	}
	return votes
}

// compareRolledNames orders two rolled files oldest first by their names:
// plain numbers by the numbering convention, anything else (dates,
// timestamps) as it reads, with dated names before numbered ones.
func compareRolledNames(a, b *rolledFile, newestIsOne bool) int {
	switch {
	case a.numbered && b.numbered:
		if newestIsOne {
			return b.index - a.index
		}
		return a.index - b.index
	case a.numbered:
		return 1
	case b.numbered:
		return -1
	}
	return naturalCompare(a.name, b.name)
}

// rolledIndex returns the number of a size-rolled name's suffix (the 3 of
// server.log.3 or server.log.3.gz). Longer digit runs are dates
// (server.log.20251016).
func rolledIndex(suffix string) (int, bool) {
	if len(suffix) == 0 || len(suffix) > 6 || digitRun(suffix) != len(suffix) {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	return n, err == nil
}

func modTime(rf *rolledFile) time.Time {
	if rf.info == nil {
		return time.Time{}
	}
	return rf.info.ModTime()
}

// readFirstTime looks for the timestamp of the file's first log line,
// reading into buf, which it returns for the next file.
func (rf *rolledFile) readFirstTime(buf []byte) []byte {
	if rf.firstKnown {
		return buf
	}
	rf.firstKnown = true
	if rf.lineTime == nil {
		return buf
	}
	if cap(buf) < firstLineSearch {
		buf = make([]byte, firstLineSearch)
	}
	buf = buf[:firstLineSearch]
	var n int
	if rf.open == nil {
		n, _ = readHead(rf.name, buf)
	} else {
		r, err := rf.open(rf.name)
		if err != nil {
			return buf
		}
		n, _ = io.ReadFull(r, buf)
		r.Close()
	}
	rf.firstTime = firstLineTime(buf[:n], rf.lineTime)
	return buf
}

// firstLineTime returns the timestamp at the start of the first line of head
// that has one: a rolled file can begin with the rest of a stack trace. Both
// sides of a comparison come from the same writer, so the zone does not
// matter.
func firstLineTime(head []byte, lineTime LineTime) time.Time {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if t, ok := lineTime(line); ok {
			return t
		}
	}
	return time.Time{}
}

// naturalCompare orders strings with runs of digits compared by value, so
// that server.log.10 sorts after server.log.9.
func naturalCompare(a, b string) int {
	// Skip the common prefix (siblings share their directory and base name),
	// backing up to the start of a digit run it ends in.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && isDigit(a[i-1]) {
		i--
	}
	a, b = a[i:], b[i:]
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			da, db := digitRun(a), digitRun(b)
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
