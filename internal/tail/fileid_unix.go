//go:build unix

package tail

import (
	"os"
	"syscall"
)

// fileID returns the device and inode numbers of a file, the identity that
// survives a rename and that a saved Position refers to.
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return widen(st.Dev), st.Ino
	}
	return 0, 0
}

// widen converts a device number to uint64: Stat_t.Dev is uint64 on most
// platforms but int32 or uint32 on others, while Ino is uint64 on all.
func widen[T int32 | uint32 | uint64](dev T) uint64 {
	return uint64(dev)
}
