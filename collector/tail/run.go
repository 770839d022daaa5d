package tail

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Run follows the file until ctx is done, calling Poll every PollInterval and
// whenever the directory watch reports activity on the file or its rolled
// siblings. Before returning it polls once more, so that what was written
// up to the cancellation is delivered, then closes the files; Position stays
// valid for a final save. Poll errors are logged and retried, never fatal.
// On a pipe, Run returns nil at the end of input.
func (f *Follower) Run(ctx context.Context, deliver func(line []byte)) error {
	defer f.Close()
	if f.pipe != nil {
		return f.runPipe(ctx, deliver)
	}
	wake := make(chan struct{}, 1)
	if f.opts.UseFsnotify {
		stop := f.watchDir(wake)
		defer stop()
	}
	ticker := time.NewTicker(f.opts.PollInterval)
	defer ticker.Stop()
	var lastErr string
	for {
		err := f.Poll(deliver)
		// Log an error when it starts or changes, not on every poll.
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != "" && msg != lastErr {
			f.log.Warn("cannot follow the file, retrying", "err", err)
		}
		lastErr = msg
		select {
		case <-ctx.Done():
			f.Poll(deliver)
			return nil
		case <-ticker.C:
		case <-wake:
		}
	}
}

// runPipe reads the pipe to its end. A read blocked on a pipe cannot be
// interrupted in general; when the reader supports deadlines (an *os.File on
// a pollable pipe) cancellation unblocks it, otherwise Run returns at the
// next data or the end of input.
func (f *Follower) runPipe(ctx context.Context, deliver func([]byte)) error {
	if d, ok := f.pipe.(interface{ SetReadDeadline(time.Time) error }); ok {
		stop := context.AfterFunc(ctx, func() { d.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	for {
		err := f.pollPipe(deliver)
		if err == io.EOF {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return err
		}
	}
}

// watchDir watches the file's directory (the file itself is replaced at
// every rotation, the directory is not) and turns events about the file or
// its rolled siblings into a non-blocking wake-up. Any failure leaves us
// polling. The returned function stops the watch and waits for its
// goroutine.
func (f *Follower) watchDir(wake chan<- struct{}) (stop func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		f.log.Info("no directory watch, polling only", "err", err)
		return func() {}
	}
	if err := w.Add(filepath.Dir(f.path)); err != nil {
		f.log.Info("no directory watch, polling only", "err", err)
		w.Close()
		return func() {}
	}
	prefix := filepath.Clean(f.path)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Name == prefix || strings.HasPrefix(ev.Name, prefix+".") {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			case _, ok := <-w.Errors:
				// An overflowed event queue only costs a wake-up;
				// the poll ticker covers it.
				if !ok {
					return
				}
			}
		}
	})
	return func() {
		w.Close()
		wg.Wait()
	}
}
