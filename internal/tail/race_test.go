//go:build race

package tail

// raceEnabled: the race detector slows everything tenfold, so tests that
// measure speed only check the outcome.
const raceEnabled = true
