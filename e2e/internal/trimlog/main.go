// Command trimlog cuts a real Kafka log from an e2e cluster down to a small,
// deterministic fixture for internal/logparse/testdata: it keeps the replication
// records of the chosen topics (with their continuation lines), caps the
// chatty DEBUG/TRACE kinds, and replaces what differs from run to run
// (directories, ports, topic/directory/cluster ids) with fixed values.
//
//	trimlog -cluster DIR -topics 're' [-max N] [-per-kind N] FILE... > fixture.log
//
// The files are read in the order given (rolled files first).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// keep lists what a fixture is for: the replication lines of the catalog
// (docs/log-formats.md), by a short kind name used for capping.
var keep = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"hw", regexp.MustCompile(`High watermark updated from`)},
	// The metadata log's Raft client and the controller's view of its
	// leader, with the lines that look alike (not parsed).
	{"quorum", regexp.MustCompile(`\[RaftManager id=\d+\] (?:Completed transition|Attempting durable transition|Transitioning to Prospective|` +
		`Become candidate|Did not receive fetch request|The latest computed high watermark|Truncated to offset|Fully truncated|` +
		`Election has timed out|Re-elect as candidate)|\[QuorumController id=\d+\] (?:Becoming the active|In the new epoch|Renouncing|` +
		`.*We were the leader|.*Renouncing leadership)`)},
	{"hwskip", regexp.MustCompile(`Skipping update high watermark`)},
	{"acks", regexp.MustCompile(`Progress awaiting ISR acks`)},
	{"leo", regexp.MustCompile(`Recorded replica \d+ log end offset`)},
	{"blocked", regexp.MustCompile(`Not increasing HWM`)},
	{"loaded", regexp.MustCompile(`Log loaded for partition|No checkpointed highwatermark`)},
	{"shrink", regexp.MustCompile(`Shrinking ISR`)},
	{"isr", regexp.MustCompile(`ISR updated to|Submitting ISR state change|Ignoring failed ISR update|Failed to alter partition`)},
	{"append", regexp.MustCompile(`Error processing append operation`)},
	{"state", regexp.MustCompile(`starts at leader epoch|Skipped the become-|RECOVERING|Creating new partition`)},
	{"trunc", regexp.MustCompile(`Truncat|Non-monotonic update|below high watermark|caused truncation`)},
	{"epoch", regexp.MustCompile(`Appended new epoch entry|Cleared entries`)},
	{"controller", regexp.MustCompile(`UNCLEAN partition change|nclean leader election|using an unclean election|` +
		`using ELR|Fencing broker|changing \d+ partition`)},
}

func main() {
	cluster := flag.String("cluster", "", "cluster directory (node-N/server.properties), for the replacements")
	topics := flag.String("topics", ".", "regexp of the topics to keep")
	maxLines := flag.Int("max", 300, "maximum lines written")
	perKind := flag.Int("per-kind", 40, "maximum DEBUG/TRACE records of one kind per topic")
	flag.Parse()
	if err := run(*cluster, regexp.MustCompile(`^(?:`+*topics+`)$`), *maxLines, *perKind, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "trimlog:", err)
		os.Exit(1)
	}
}

var (
	header   = regexp.MustCompile(`^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) `)
	topicRef = regexp.MustCompile(`(?:Partition |partition |partition=|for |Leader |Follower |change for |state change for |Truncating )` +
		`(?:[A-Za-z0-9_-]{22}:)?([A-Za-z0-9._-]+)-\d+\b`)
	// Ids Kafka prints in these contexts: topic ids, directory ids, cluster id.
	idContext = regexp.MustCompile(`(?:topic id Some\(|topic id |topic ID |topicId=|Some\(|directories=\[|, |clusterId=|cluster ID |` +
		`directoryId=|directoryId=Optional\[)([A-Za-z0-9_-]{22})\b`)
	idPrefix = regexp.MustCompile(`\b([A-Za-z0-9_-]{22}):[A-Za-z0-9._-]+-\d+\b`)
)

type record struct{ lines []string }

func run(cluster string, topics *regexp.Regexp, maxLines, perKind int, files []string) error {
	var out []record
	counts := map[string]int{}
	for _, f := range files {
		recs, err := readRecords(f)
		if err != nil {
			return err
		}
		for _, r := range recs {
			first := r.lines[0]
			kind := kindOf(first)
			if kind == "" {
				continue
			}
			topic := ""
			if m := topicRef.FindStringSubmatch(first); m != nil {
				topic = m[1]
			}
			if !topics.MatchString(topic) && kind != "controller" && kind != "quorum" {
				continue
			}
			if lvl := header.FindStringSubmatch(first); lvl != nil && (lvl[1] == "TRACE" || lvl[1] == "DEBUG") {
				key := kind + "/" + topic
				if counts[key] >= perKind {
					continue
				}
				counts[key]++
			}
			out = append(out, r)
		}
	}
	rep, err := replacements(cluster, out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	n := 0
	for _, r := range out {
		if n+len(r.lines) > maxLines {
			break
		}
		for _, l := range r.lines {
			fmt.Fprintln(w, rep.Replace(l))
			n++
		}
	}
	return nil
}

func kindOf(line string) string {
	for _, k := range keep {
		if k.re.MatchString(line) {
			return k.kind
		}
	}
	return ""
}

// readRecords splits a file into records: a header line and its continuations.
func readRecords(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for s.Scan() {
		line := s.Text()
		if header.MatchString(line) || len(recs) == 0 {
			recs = append(recs, record{lines: []string{line}})
			continue
		}
		last := &recs[len(recs)-1]
		last.lines = append(last.lines, line)
	}
	return recs, s.Err()
}

// replacements maps run-specific text to fixed values: the cluster directory,
// loopback ports (by node and listener) and 22-character ids, numbered in
// order of first appearance.
func replacements(cluster string, recs []record) (*strings.Replacer, error) {
	var pairs []string
	if cluster != "" {
		abs, err := filepath.Abs(cluster)
		if err != nil {
			return nil, err
		}
		nodes, err := filepath.Glob(filepath.Join(abs, "node-*"))
		if err != nil {
			return nil, err
		}
		for _, node := range nodes {
			id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(node), "node-"))
			if err != nil {
				continue
			}
			pairs = append(pairs, node+"/data", "/var/lib/kafka/data", node+"/logs", "/var/log/kafka")
			props, err := os.ReadFile(filepath.Join(node, "server.properties"))
			if err != nil {
				return nil, err
			}
			for _, l := range strings.Split(string(props), "\n") {
				if v, ok := strings.CutPrefix(l, "listeners="); ok {
					for i, listener := range strings.Split(v, ",") {
						port := listener[strings.LastIndex(listener, ":")+1:]
						fixed := fmt.Sprint(9000 + 100*i + id) // brokers 9001..9003, controller 101 on 9101
						pairs = append(pairs, "127.0.0.1:"+port, "localhost:"+fixed, "127.0.0.1, port="+port, "localhost, port="+fixed,
							"127.0.0.1/<unresolved>:"+port, "localhost/<unresolved>:"+fixed)
					}
				}
			}
		}
		pairs = append(pairs, abs, "/kafka")
	}
	seen := map[string]bool{}
	var ids []string
	for _, r := range recs {
		for _, l := range r.lines {
			for _, re := range []*regexp.Regexp{idContext, idPrefix} {
				for _, m := range re.FindAllStringSubmatch(l, -1) {
					if !seen[m[1]] && looksLikeID(m[1]) {
						seen[m[1]] = true
						ids = append(ids, m[1])
					}
				}
			}
		}
	}
	for i, id := range ids {
		pairs = append(pairs, id, fmt.Sprintf("FixedId%015d", i+1))
	}
	// Longest first, so that a directory wins over its prefix.
	type pair struct{ from, to string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].from) > len(ps[j].from) })
	flat := make([]string, 0, len(pairs))
	for _, p := range ps {
		flat = append(flat, p.from, p.to)
	}
	return strings.NewReplacer(flat...), nil
}

// looksLikeID rejects 22-letter words: a Kafka Uuid in base64 virtually always
// mixes cases and digits or symbols.
func looksLikeID(s string) bool {
	var upper, lower, other bool
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		default:
			other = true
		}
	}
	return upper && lower && other || (upper || lower) && other && !strings.Contains(s, ".")
}
