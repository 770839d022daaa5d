package admin

import (
	"context"
	"time"
)

// logLevelRaise raises kafka.cluster.Partition on this sidecar's broker for
// the sidecar's lifetime (opt-in --kafka.partition-log-level): the HW lines
// the log half needs are DEBUG/TRACE. Only this broker is touched, because
// every broker has its own sidecar and Kafka does not forward
// BROKER_LOGGER changes.
type logLevelRaise struct {
	level    string
	raised   bool
	warned   bool
	brokerID int32
	addr     string
	previous *string // level to put back; nil = Delete (the broker's configured level)
}

func newLogLevelRaise(level string) *logLevelRaise { return &logLevelRaise{level: level} }

// raise is called after each refresh; it acts once, as soon as this broker
// is known, and retries on later refreshes if Kafka refused.
func (r *logLevelRaise) raise(a *Poller) {
	if r.level == "" || r.raised || a.brokerID < 0 {
		return
	}
	addr, ok := a.brokers[a.brokerID]
	if !ok || a.unresponsive(a.brokerID) {
		return // a frozen broker would hold up the next refresh by two timeouts
	}
	// Not the run's context: a raise cut short by shutdown may still have
	// been applied, and then it would never be restored.
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.RequestTimeout)
	defer cancel()
	prev, err := a.pool.brokerLoggerLevel(ctx, addr, a.brokerID, partitionLogger)
	if err != nil {
		// Not fatal: restoring with Delete falls back to the broker's
		// configured level, which is almost always the previous one.
		a.logger.Debug("Could not read the broker logger level", "broker", a.brokerID, "logger", partitionLogger, "err", err)
		prev = ""
	}
	if prev == r.level {
		r.raised, r.previous = false, nil
		r.level = "" // already there: nothing to raise, nothing to restore
		return
	}
	level := r.level
	if err := a.pool.alterBrokerLogger(ctx, addr, a.brokerID, partitionLogger, &level); err != nil {
		a.counts.requestErrors[RequestAlterLogLevel]++
		log := a.logger.Debug
		if !r.warned {
			log, r.warned = a.logger.Warn, true
		}
		log("Could not raise the broker logger level; will retry", "broker", a.brokerID, "logger", partitionLogger, "level", level, "err", err)
		return
	}
	r.raised, r.brokerID, r.addr = true, a.brokerID, addr
	if prev != "" {
		r.previous = &prev
	}
	a.logger.Info("Raised broker logger level", "broker", a.brokerID, "logger", partitionLogger, "level", level, "previous", prev)
}

// restoreTimeout bounds the restore on exit: a sidecar that is stopping must
// exit within seconds even if its broker is frozen (a restarted broker is back
// at its configured level anyway).
const restoreTimeout = 2 * time.Second

// restore puts the level back on exit.
func (r *logLevelRaise) restore(a *Poller) {
	if !r.raised {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(a.cfg.RequestTimeout, restoreTimeout))
	defer cancel()
	if err := a.pool.alterBrokerLogger(ctx, r.addr, r.brokerID, partitionLogger, r.previous); err != nil {
		a.counts.requestErrors[RequestAlterLogLevel]++
		a.logger.Warn("Could not restore the broker logger level", "broker", r.brokerID, "logger", partitionLogger, "err", err)
		return
	}
	r.raised = false
	a.logger.Info("Restored broker logger level", "broker", r.brokerID, "logger", partitionLogger)
}
