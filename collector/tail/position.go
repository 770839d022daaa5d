package tail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Position is where a follower stands: the end of the last line it
// delivered, in the file identified by Dev and Inode, which was (or still is)
// at Path. The head fingerprint (a hash of the file's first HeadLen bytes)
// tells the same file from a new one that reused the inode, and a file that
// was truncated and regrown while we were down.
type Position struct {
	Path     string `json:"path"`
	Dev      uint64 `json:"dev"`
	Inode    uint64 `json:"inode"`
	Offset   int64  `json:"offset"`
	HeadLen  int    `json:"head_len"`
	HeadHash uint64 `json:"head_hash"`

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
// crash leaves either the old or the new set, never a torn one. The caller
// decides when to save: every few seconds and at shutdown is typical.
type PositionStore struct {
	path string
	mu   sync.Mutex // serialises Save calls sharing the temporary file
}

// NewPositionStore returns a store backed by the file at path.
func NewPositionStore(path string) *PositionStore { return &PositionStore{path: path} }

type positionFile struct {
	Version   int        `json:"version"`
	Positions []Position `json:"positions"`
}

// Load returns the saved positions keyed by Path. A missing file is not an
// error: it is the first start. A file that is not a version 1 position file
// is an error; within one, an entry whose fields have the wrong types or
// values is still returned, marked, and the follower given it warns and
// reads its file from the beginning (entries without a path name no file and
// are left out).
func (s *PositionStore) Load() (map[string]Position, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Position{}, nil
	}
	if err != nil {
		return nil, err
	}
	out, err := decodePositions(data)
	if err != nil {
		return nil, fmt.Errorf("position file %s: %w", s.path, err)
	}
	return out, nil
}

// decodePositions decodes a position file entry by entry, so that one
// damaged entry costs only its own file's position.
func decodePositions(data []byte) (map[string]Position, error) {
	var pf struct {
		Version   int               `json:"version"`
		Positions []json.RawMessage `json:"positions"`
	}
	if err := json.Unmarshal(data, &pf); err != nil {
		return nil, err
	}
	if pf.Version != 1 {
		return nil, fmt.Errorf("unknown version %d", pf.Version)
	}
	out := make(map[string]Position, len(pf.Positions))
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
		out[p.Path] = p
	}
	return out, nil
}

// Save writes positions, replacing everything saved before.
func (s *PositionStore) Save(positions []Position) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		d.Sync()
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
