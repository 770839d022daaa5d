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
		return uint64(st.Dev), uint64(st.Ino) // Dev is int32 on some platforms
	}
	return 0, 0
}
