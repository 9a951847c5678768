//go:build race

package hashchain

// raceEnabled says whether the race detector is on; it makes sync.Pool
// drop items, so allocation counts do not hold.
const raceEnabled = true
