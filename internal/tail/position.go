package tail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Position is where a follower stands: the end of the last line it
// delivered, in the file identified by Dev and Inode, which was (or still is)
// at Path. The head fingerprint (a hash of the file's first HeadLen bytes)
// is what identifies the file's content: it tells the same file from a new
// one that reused the inode, recognizes a copy of it under another inode,
// and a file that was truncated and regrown while we were down.
type Position struct {
	Path     string `json:"path"`
	Dev      uint64 `json:"dev"`
	Inode    uint64 `json:"inode"`
	Offset   int64  `json:"offset"`
	HeadLen  int    `json:"head_len"`
	HeadHash uint64 `json:"head_hash"`
	// LastEvent is the log time (Unix nanoseconds) of the last event the
	// caller applied before this point, which the follower does not know:
	// the caller sets it, so that a restart that has to read the file from
	// its beginning can skip what was applied already. 0: unknown (also in
	// a position file written before it existed).
	LastEvent int64 `json:"last_event_unix_nano,omitempty"`

	// corrupt is why the entry could not be decoded, for one loaded from a
	// damaged file; the follower then takes the safe path (see check).
	corrupt string
}

// check reports what is wrong with a loaded position. A position this
// package saved always passes: its head covers the start of the file up to
// the offset or headSize bytes, and an empty head has the empty hash.
func (p Position) check() error {
	switch {
	case p.corrupt != "":
		return errors.New(p.corrupt)
	case p.Offset < 0:
		return fmt.Errorf("offset %d is negative", p.Offset)
	case p.HeadLen < 0 || p.HeadLen > headSize:
		return fmt.Errorf("head_len %d is outside 0..%d", p.HeadLen, headSize)
	case int64(p.HeadLen) < min(p.Offset, headSize):
		return fmt.Errorf("head_len %d is too short for offset %d", p.HeadLen, p.Offset)
	case p.HeadLen == 0 && p.HeadHash != headHash(nil):
		return fmt.Errorf("head_hash %d is not the hash of an empty head", p.HeadHash)
	}
	return nil
}

// headHash is FNV-1a, inlined because it runs after every chunk read.
func headHash(head []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range head {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return h
}

// PositionStore keeps the positions of several followers in one JSON file.
// Save replaces the file atomically (temporary file, fsync, rename), so a
// crash leaves either the old or the new set, never a torn one; a file torn
// all the same (a filesystem that lost blocks) loads as no positions, with a
// warning. The caller decides when to save: every few seconds and at
// shutdown is typical. One process at a time may use a position file: Lock
// takes an exclusive lock on a sibling file, path + ".lock", until Close.
type PositionStore struct {
	path   string
	logger *slog.Logger
	mu     sync.Mutex // serializes Save calls sharing the temporary file
	lock   *os.File   // the lock file, held from Lock to Close

	saveErrors atomic.Uint64
	failing    bool // the last Save failed; guarded by mu
	problems   [numLoadProblems]atomic.Uint64
}

// NewPositionStore returns a store backed by the file at path.
func NewPositionStore(path string) *PositionStore {
	return &PositionStore{path: path, logger: slog.New(slog.DiscardHandler)}
}

// WithLogger sets where Load's problems and changes of Save's state (it
// starts failing, it works again) are logged, once each.
func (s *PositionStore) WithLogger(l *slog.Logger) *PositionStore {
	s.logger = l
	return s
}

// Path is the position file's path.
func (s *PositionStore) Path() string { return s.path }

// LoadProblem is why a saved position cannot be used. The follower then
// starts as if nothing was saved for it (Problem EmptyFile, TornFile: every
// follower) or reads its live file from the beginning (DamagedEntry).
type LoadProblem struct {
	Problem LoadProblemKind
	Path    string // the log file of a damaged entry; "" for the whole file
	Err     error
}

// LoadProblemKind says what was wrong with a position file.
type LoadProblemKind uint8

// The kinds of LoadProblem.
const (
	DamagedEntry LoadProblemKind = iota // one entry has wrong types or impossible values
	EmptyFile                           // no content (nothing but blanks or NUL bytes)
	TornFile                            // a position file cut short or garbled: not valid JSON
	numLoadProblems
)

// LoadProblemKinds lists every kind, for metrics that show each from 0.
var LoadProblemKinds = []LoadProblemKind{DamagedEntry, EmptyFile, TornFile}

func (k LoadProblemKind) String() string {
	return [...]string{"damaged_entry", "empty", "torn"}[k]
}

// PositionStoreStats are the store's counters since it was made.
type PositionStoreStats struct {
	SaveErrors   uint64                  // Save calls that failed
	Saving       bool                    // the last Save succeeded (or none was tried)
	LoadProblems [numLoadProblems]uint64 // by LoadProblemKind
}

// Stats returns the store's counters.
func (s *PositionStore) Stats() PositionStoreStats {
	st := PositionStoreStats{SaveErrors: s.saveErrors.Load()}
	s.mu.Lock()
	st.Saving = !s.failing
	s.mu.Unlock()
	for k := range st.LoadProblems {
		st.LoadProblems[k] = s.problems[k].Load()
	}
	return st
}

// Lock takes the store's lock file, path + ".lock", without waiting, and
// holds it until Close. Another process holding it is ErrPositionFileInUse.
// The lock is on a sibling because Save replaces the position file itself.
func (s *PositionStore) Lock() error {
	f, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return fmt.Errorf("%w: %s is locked by another process (%s): give each exporter its own position file",
				ErrPositionFileInUse, f.Name(), lockHolder(f.Name()))
		}
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	// Who holds it, for the message of the one refused; without it that
	// message says "pid unknown", so a failed write is not an error here.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0)
	s.lock = f
	return nil
}

// ErrPositionFileInUse is Lock's error when another process uses the file.
var ErrPositionFileInUse = errors.New("position file in use")

func lockHolder(name string) string {
	b, err := os.ReadFile(name)
	if holder := strings.TrimSpace(string(b)); err == nil && strings.HasPrefix(holder, "pid ") && len(holder) < 32 {
		return holder
	}
	return "pid unknown"
}

// Close releases the lock taken by Lock.
func (s *PositionStore) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// Load returns the saved positions keyed by Path and what was wrong with
// them, each problem counted (Stats) and logged at WARN. A missing file is
// not a problem: it is the first start. An empty or torn file is one
// problem: no positions. An entry whose fields have the wrong types or
// values is still returned, marked, and the follower given it warns and
// reads its file from the beginning (entries without a path name no file and
// are left out). The error is for a file that cannot be read, or that is
// something else than a position file (another version, or not JSON at
// all), which Save must not overwrite.
func (s *PositionStore) Load() (map[string]Position, []LoadProblem, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Position{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out, problems, err := decodePositions(data)
	if err != nil {
		return nil, nil, fmt.Errorf("position file %s: %w", s.path, err)
	}
	for _, p := range problems {
		s.problems[p.Problem].Add(1)
		if p.Path == "" {
			s.logger.Warn("Position file is "+p.Problem.String()+": every log file starts as if no position was saved",
				"position_file", s.path, "err", p.Err)
		} else {
			s.logger.Warn("Saved position is damaged: that log file is read from the beginning",
				"position_file", s.path, "file", p.Path, "err", p.Err)
		}
	}
	return out, problems, nil
}

type positionFile struct {
	Version   int        `json:"version"`
	Positions []Position `json:"positions"`
}

// decodePositions decodes a position file entry by entry, so that one
// damaged entry costs only its own file's position.
func decodePositions(data []byte) (map[string]Position, []LoadProblem, error) {
	content := bytes.Trim(data, " \t\r\n\x00")
	if len(content) == 0 {
		return map[string]Position{}, []LoadProblem{{Problem: EmptyFile, Err: fmt.Errorf("%d bytes, none of them content", len(data))}}, nil
	}
	var pf struct {
		Version   int               `json:"version"`
		Positions []json.RawMessage `json:"positions"`
	}
	if err := json.Unmarshal(data, &pf); err != nil {
		var syntax *json.SyntaxError
		if content[0] == '{' && (errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF)) {
			// Ours, cut short or garbled: nothing in it can be trusted.
			return map[string]Position{}, []LoadProblem{{Problem: TornFile, Err: err}}, nil
		}
		return nil, nil, fmt.Errorf("not a position file: %w", err)
	}
	if pf.Version != 1 {
		return nil, nil, fmt.Errorf("unknown version %d", pf.Version)
	}
	out := make(map[string]Position, len(pf.Positions))
	var problems []LoadProblem
	for _, raw := range pf.Positions {
		var named struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(raw, &named) != nil || named.Path == "" {
			continue
		}
		var p Position
		if err := json.Unmarshal(raw, &p); err != nil {
			p = Position{Path: named.Path, corrupt: err.Error()}
		}
		if err := p.check(); err != nil {
			p = Position{Path: named.Path, corrupt: err.Error()}
		}
		if p.corrupt != "" {
			problems = append(problems, LoadProblem{Problem: DamagedEntry, Path: p.Path, Err: errors.New(p.corrupt)})
		}
		out[p.Path] = p
	}
	return out, problems, nil
}

// Save writes positions, replacing everything saved before. A failure is
// counted (Stats) and logged at WARN when saving starts failing, at INFO
// when it works again; the caller keeps the error for its exit status.
func (s *PositionStore) Save(positions []Position) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.save(positions)
	switch {
	case err != nil:
		s.saveErrors.Add(1)
		if !s.failing {
			s.logger.Warn("Saving log positions failed: a restart resumes from the last positions saved, re-reading or skipping what was read since",
				"position_file", s.path, "err", err)
		}
		s.failing = true
	case s.failing:
		s.logger.Info("Saving log positions works again", "position_file", s.path)
		s.failing = false
	}
	return err
}

func (s *PositionStore) save(positions []Position) error {
	sorted := append([]Position(nil), positions...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	data, err := json.MarshalIndent(positionFile{Version: 1, Positions: sorted}, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := writeSynced(tmp, append(data, '\n')); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		os.Remove(tmp)
		return err
	}
	// Make the rename itself durable; a failure here only weakens
	// durability, the file content is already correct.
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
