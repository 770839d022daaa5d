package poller

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// Which of the advertised brokers this sidecar runs beside, when
// --kafka.broker-id does not say: the broker id its own log lines name
// (refresh.go asks the LogStore), else the broker whose advertised address
// is a --kafka.server. Addresses are compared as the network sees them, not
// as strings: "localhost:9092" is the broker that advertises
// "127.0.0.1:9092", and a name is the broker whose name resolves to the same
// IP on the same port.

// hostAddrs are this host's own IP addresses (net.InterfaceAddrs).
type hostAddrs map[netip.Addr]bool

// ownAddrs lists this host's interface addresses; none when they cannot be
// read, which leaves loopback and the unspecified address local.
func ownAddrs() hostAddrs {
	h := hostAddrs{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return h
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			h[p.Addr().Unmap()] = true
		}
	}
	return h
}

// local reports whether ip reaches this host: loopback, the unspecified
// address (a broker listening on 0.0.0.0 may advertise it) or one of its
// interfaces.
func (h hostAddrs) local(ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsUnspecified() || h[ip.Unmap()]
}

// lookupFunc resolves a host name to its IP addresses; nil on failure.
type lookupFunc func(ctx context.Context, host string) []netip.Addr

func lookupHost(ctx context.Context, host string) []netip.Addr {
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for i := range ips {
		ips[i] = ips[i].Unmap()
	}
	return ips
}

// How well an advertised address matches a --kafka.server, best last.
const (
	noMatch    = iota
	bothLocal  // both reach this host, on the same port
	sameIP     // they resolve to a common IP, on the same port
	sameString // the same host:port, but for case
)

// matchNames are the ways a broker was identified, for the log.
var matchNames = [...]string{bothLocal: "both addresses are this host's", sameIP: "same IP and port", sameString: "same address"}

// addrMatch is the outcome of matching servers to the advertised brokers:
// the broker found (-1: none), or the brokers that matched equally well.
type addrMatch struct {
	id        int32
	how       string
	ambiguous []int32 // sorted
}

// brokerAtServer finds this sidecar's broker by matching the --kafka.server
// addresses to the advertised broker addresses, on the same port: the same
// string, else a common IP, else both this host's. Among brokers matched
// equally well the one whose address is this host's wins; several such
// brokers (several bootstrap servers on one host) leave it unknown.
func brokerAtServer(ctx context.Context, brokers map[int32]string, servers []string, lookup lookupFunc, host hostAddrs) addrMatch {
	type hp struct{ host, port string }
	split := func(addr string) (hp, bool) {
		h, p, err := net.SplitHostPort(addr)
		return hp{h, p}, err == nil
	}
	var srv []hp
	ports := map[string]bool{}
	for _, s := range servers {
		if a, ok := split(s); ok {
			srv = append(srv, a)
			ports[a.port] = true
		}
	}
	adv := make(map[int32]hp, len(brokers))
	names := map[string]bool{}
	for id, addr := range brokers {
		// Only a broker on a port some server names can match.
		if a, ok := split(addr); ok && ports[a.port] {
			adv[id] = a
			names[strings.ToLower(a.host)] = true
		}
	}
	for _, s := range srv {
		names[strings.ToLower(s.host)] = true
	}
	ips := resolveAll(ctx, names, lookup)

	best, score := noMatch, map[int32]int{}
	for id, a := range adv {
		for _, s := range srv {
			if s.port != a.port {
				continue
			}
			m := noMatch
			sIPs, aIPs := ips[strings.ToLower(s.host)], ips[strings.ToLower(a.host)]
			switch {
			case strings.EqualFold(s.host, a.host):
				m = sameString
			case slices.ContainsFunc(sIPs, func(ip netip.Addr) bool { return slices.Contains(aIPs, ip) }):
				m = sameIP
			case len(sIPs) > 0 && !slices.ContainsFunc(sIPs, func(ip netip.Addr) bool { return !host.local(ip) }) &&
				slices.ContainsFunc(aIPs, host.local):
				m = bothLocal
			}
			if m > score[id] {
				score[id] = m
			}
			best = max(best, m)
		}
	}
	if best == noMatch {
		return addrMatch{id: -1}
	}
	var top, here []int32
	for id, m := range score {
		if m == best {
			top = append(top, id)
			if slices.ContainsFunc(ips[strings.ToLower(adv[id].host)], host.local) {
				here = append(here, id)
			}
		}
	}
	slices.Sort(top)
	switch {
	case len(top) == 1:
		return addrMatch{id: top[0], how: matchNames[best]}
	case len(here) == 1:
		return addrMatch{id: here[0], how: matchNames[best] + ", the only one on this host"}
	}
	return addrMatch{id: -1, ambiguous: top}
}

// resolveAll resolves every name at once (an IP literal is itself), so that
// one slow name server costs the refresh one lookup's time.
func resolveAll(ctx context.Context, names map[string]bool, lookup lookupFunc) map[string][]netip.Addr {
	out := make(map[string][]netip.Addr, len(names))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for name := range names {
		if ip, err := netip.ParseAddr(name); err == nil {
			mu.Lock()
			out[name] = []netip.Addr{ip.Unmap()}
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			ips := lookup(ctx, name)
			mu.Lock()
			out[name] = ips
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}
