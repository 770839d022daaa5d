package poller

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

// GroupsConfig is the flags of the consumer-side reads: the consumer
// groups (fetch_groups.go), the share groups (fetch_share_groups.go) and
// the last stable offset (fetch_lso.go). All are off by default: they are
// requests a replication sidecar does not otherwise make.
type GroupsConfig struct {
	Enabled bool
	Include string // anchored regular expression of groups to read
	Exclude string // anchored regular expression of groups to skip; "" = none
	// Share, ShareInclude and ShareExclude are the same for share groups.
	Share        bool
	ShareInclude string
	ShareExclude string
	// LastStableOffset: read each exported partition's LSO.
	LastStableOffset bool
	// LSOStallThreshold is how long an LSO may stand below the HW before it
	// counts as stalled: a transaction open longer than any client's
	// transaction timeout (build_lso.go).
	LSOStallThreshold time.Duration
}

// addGroupFlags registers the consumer-group flags on cmd.
func addGroupFlags(cmd *kingpin.CmdClause, c *GroupsConfig) {
	cmd.Flag("collector.consumer-groups",
		"Read the committed offsets of consumer groups (ListGroups, DescribeGroups — ConsumerGroupDescribe for KIP-848 groups —, "+
			"OffsetFetch) and export each group's lag to the high watermark and whether replication starves it.").
		Default("false").BoolVar(&c.Enabled)
	cmd.Flag("collector.consumer-groups.include", "Regular expression of consumer groups to read (anchored).").Default(".*").StringVar(&c.Include)
	cmd.Flag("collector.last-stable-offset",
		"Read the last stable offset of every exported partition (ListOffsets read_committed to each leader): how far read_committed consumers can read.").
		Default("false").BoolVar(&c.LastStableOffset)
	cmd.Flag("collector.last-stable-offset.stall-threshold",
		"How long the last stable offset of a partition may stay below its high watermark before it counts as stalled: "+
			"a transaction open that long holds read_committed consumers back (a hanging transaction). "+
			"Above the longest transaction.timeout.ms of your producers.").
		Default("5m").DurationVar(&c.LSOStallThreshold)
	cmd.Flag("collector.consumer-groups.exclude", "Regular expression of consumer groups not to read (anchored).").Default("").StringVar(&c.Exclude)
	cmd.Flag("collector.share-groups",
		"Read the share-partition start offsets of share groups (ListGroups, DescribeShareGroupOffsets; Kafka 4.1+ with share.version 1 or more) "+
			"and export each share group's lag to the high watermark and whether replication starves it.").
		Default("false").BoolVar(&c.Share)
	cmd.Flag("collector.share-groups.include", "Regular expression of share groups to read (anchored).").Default(".*").StringVar(&c.ShareInclude)
	cmd.Flag("collector.share-groups.exclude", "Regular expression of share groups not to read (anchored).").Default("").StringVar(&c.ShareExclude)
}

// filter compiles the consumer-group expressions: nil when every group is
// read.
func (c *GroupsConfig) filter() (func(group string) bool, error) {
	return groupFilter("consumer-groups", c.Include, c.Exclude)
}

// shareFilter is filter for share groups.
func (c *GroupsConfig) shareFilter() (func(group string) bool, error) {
	return groupFilter("share-groups", c.ShareInclude, c.ShareExclude)
}

// groupFilter compiles the include and exclude expressions of the flags
// --collector.<flag>.include and .exclude: nil when every group is read.
func groupFilter(flag, include, exclude string) (func(group string) bool, error) {
	inc, err := regexp.Compile("^(?:" + include + ")$")
	if err != nil {
		return nil, fmt.Errorf("--collector.%s.include: %w", flag, err)
	}
	var exc *regexp.Regexp
	if exclude != "" {
		if exc, err = regexp.Compile("^(?:" + exclude + ")$"); err != nil {
			return nil, fmt.Errorf("--collector.%s.exclude: %w", flag, err)
		}
	}
	if include == ".*" && exc == nil {
		return nil, nil
	}
	return func(g string) bool { return inc.MatchString(g) && (exc == nil || !exc.MatchString(g)) }, nil
}

// validate checks the expressions, that groups are read only where the
// admin API is, and the LSO's stall threshold.
func (c *GroupsConfig) validate(servers bool) error {
	if _, err := c.filter(); err != nil {
		return err
	}
	if _, err := c.shareFilter(); err != nil {
		return err
	}
	if c.Enabled && !servers {
		return errors.New("--collector.consumer-groups needs --kafka.server")
	}
	if c.Share && !servers {
		return errors.New("--collector.share-groups needs --kafka.server")
	}
	if c.LastStableOffset && c.LSOStallThreshold <= 0 {
		return errors.New("--collector.last-stable-offset.stall-threshold must be positive")
	}
	return nil
}
