//go:build !unix

package tail

import "os"

// fileID is not available here: resume then falls back to the head
// fingerprint alone and rotation detection still works through os.SameFile.
func fileID(os.FileInfo) (dev, ino uint64) { return 0, 0 }
