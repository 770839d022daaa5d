package poller

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/IBM/sarama"
)

// partitionLogger is the broker logger that prints HW updates (DEBUG) and
// "Not increasing HWM … under min ISR" (TRACE).
const partitionLogger = "kafka.cluster.Partition"

// logLevelRaise raises kafka.cluster.Partition on this sidecar's broker for
// the sidecar's lifetime (opt-in --kafka.partition-log-level): the HW lines
// the log half needs are DEBUG/TRACE. Only this broker is touched, because
// every broker has its own sidecar and Kafka does not forward
// BROKER_LOGGER changes.
type logLevelRaise struct {
	level    string
	pool     *brokerPool
	timeout  time.Duration // of one request
	logger   *slog.Logger
	raised   bool
	warned   bool
	brokerID int32
	addr     string
	previous *string // level to put back; nil = Delete (the broker's configured level)
	errors   uint64  // failed requests, for RequestAlterLogLevel
}

func newLogLevelRaise(level string, pool *brokerPool, timeout time.Duration, logger *slog.Logger) *logLevelRaise {
	return &logLevelRaise{level: level, pool: pool, timeout: timeout, logger: logger}
}

// raise is called after each refresh with this sidecar's broker (-1 =
// unknown), its address and whether it answered that refresh in time. It
// acts once, as soon as the broker is known, and retries on later refreshes
// if Kafka refused.
func (r *logLevelRaise) raise(brokerID int32, addr string, responsive bool) {
	if r.level == "" || r.raised || brokerID < 0 {
		return
	}
	if addr == "" || !responsive {
		return // a frozen broker would hold up the next refresh by two timeouts
	}
	// Not the run's context: a raise cut short by shutdown may still have
	// been applied, and then it would never be restored.
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	prev, err := r.pool.brokerLoggerLevel(ctx, addr, brokerID, partitionLogger)
	if err != nil {
		// Not fatal: restoring with Delete falls back to the broker's
		// configured level, which is almost always the previous one.
		r.logger.Debug("Could not read the broker logger level", "broker", brokerID, "logger", partitionLogger, "err", err)
		prev = ""
	}
	if prev == r.level {
		r.raised, r.previous = false, nil
		r.level = "" // already there: nothing to raise, nothing to restore
		return
	}
	level := r.level
	if err := r.pool.alterBrokerLogger(ctx, addr, brokerID, partitionLogger, &level); err != nil {
		r.errors++
		log := r.logger.Debug
		if !r.warned {
			log, r.warned = r.logger.Warn, true
		}
		log("Could not raise the broker logger level; will retry", "broker", brokerID, "logger", partitionLogger, "level", level, "err", err)
		return
	}
	r.raised, r.brokerID, r.addr = true, brokerID, addr
	if prev != "" {
		r.previous = &prev
	}
	r.logger.Info("Raised broker logger level", "broker", brokerID, "logger", partitionLogger, "level", level, "previous", prev)
}

// restoreTimeout bounds the restore on exit: a sidecar that is stopping must
// exit within seconds even if its broker is frozen (a restarted broker is back
// at its configured level anyway).
const restoreTimeout = 2 * time.Second

// restore puts the level back on exit.
func (r *logLevelRaise) restore() {
	if !r.raised {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(r.timeout, restoreTimeout))
	defer cancel()
	if err := r.pool.alterBrokerLogger(ctx, r.addr, r.brokerID, partitionLogger, r.previous); err != nil {
		r.errors++
		r.logger.Warn("Could not restore the broker logger level", "broker", r.brokerID, "logger", partitionLogger, "err", err)
		return
	}
	r.raised = false
	r.logger.Info("Restored broker logger level", "broker", r.brokerID, "logger", partitionLogger)
}

// brokerLoggerLevel returns the level of logger on broker id as the broker
// reports it ("" when it does not say).
func (p *brokerPool) brokerLoggerLevel(ctx context.Context, addr string, id int32, logger string) (string, error) {
	req := &sarama.DescribeConfigsRequest{
		Version: describeConfigsVersion(p.conf.Version),
		Resources: []*sarama.ConfigResource{{
			Type: sarama.BrokerLoggerResource, Name: strconv.Itoa(int(id)), ConfigNames: []string{logger},
		}},
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) })
	if err != nil {
		return "", err
	}
	for _, r := range resp.Resources {
		if r == nil {
			continue
		}
		if r.ErrorCode != 0 {
			return "", fmt.Errorf("describe broker logger: %w (%s)", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
		for _, e := range r.Configs {
			if e != nil && e.Name == logger {
				return e.Value, nil
			}
		}
	}
	return "", nil
}

// alterBrokerLogger sets (level != nil) or deletes (level == nil, back to
// the broker's configured level) logger on broker id. Kafka applies
// BROKER_LOGGER changes only on the broker that receives them.
func (p *brokerPool) alterBrokerLogger(ctx context.Context, addr string, id int32, logger string, level *string) error {
	op := sarama.IncrementalAlterConfigsOperationSet
	if level == nil {
		op = sarama.IncrementalAlterConfigsOperationDelete
	}
	req := &sarama.IncrementalAlterConfigsRequest{
		Version: 1,
		Resources: []*sarama.IncrementalAlterConfigsResource{{
			Type:          sarama.BrokerLoggerResource,
			Name:          strconv.Itoa(int(id)),
			ConfigEntries: map[string]sarama.IncrementalAlterConfigsEntry{logger: {Operation: op, Value: level}},
		}},
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.IncrementalAlterConfigsResponse, error) {
		return b.IncrementalAlterConfigs(req)
	})
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if r != nil && r.ErrorCode != 0 {
			return fmt.Errorf("%w (%s)", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
	}
	return nil
}
