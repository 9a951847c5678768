//go:build !race

package hashchain

const raceEnabled = false
