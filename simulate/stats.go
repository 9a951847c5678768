package simulate

import (
	"math"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Stats are the figures of a run a reviewer asks for first.
type Stats struct {
	Devices int   // fleet size
	Records int64 // audit records written

	// Attempts counts socket-opens whose outcome is in the log (the work
	// the fleet put on the broker).
	Attempts int64
	// PeakPerS is the most socket-opens in one second (seconds counted
	// from the drop), PeakAt the start of that second.
	PeakPerS int64
	PeakAt   time.Duration
	// PeakUpPerS is the most socket-opens in one second once the broker
	// is up for good (from the first whole second after BrokerUp): the load
	// the recovering broker sees. PeakUpAt is the start of that second.
	PeakUpPerS int64
	PeakUpAt   time.Duration
	// MeanPerS is Attempts over the seconds from the first socket-open's
	// second to the last one's, inclusive; PeakToMean is PeakPerS over it.
	MeanPerS   float64
	PeakToMean float64

	// LibraryAttempts counts the socket-opens of the library's own
	// reconnect loop (Config.Library), which the log does not show; the
	// peaks count them too, since the broker sees them.
	LibraryAttempts int64

	Failed          int64 // attempts that found the broker down
	RefusedOverload int64 // attempts refused over the broker's capacity
	RefusedAuth     int64 // attempts refused for bad credentials

	// Recovered counts devices connected at the horizon; NotRecovered the
	// rest. Time to recover runs from the drop to the connect of the
	// session that was up at the horizon; its percentiles are nearest-rank
	// over the recovered devices.
	Recovered, NotRecovered     int
	TTR50, TTR90, TTR99, TTRMax time.Duration

	BrokerUp time.Duration // when the broker came up for good, from the drop
	Horizon  time.Duration // the end of the run, from the drop
}

// counter gathers Stats while the model runs.
type counter struct {
	records  int64
	perS     []int64 // socket-opens by second from the drop
	failures [auditfmt.FailUnknown + 1]int64
	libOpens int64
}

func (c *counter) open(t int64) {
	s := int(t / microsPerSecond)
	for len(c.perS) <= s {
		c.perS = append(c.perS, 0)
	}
	c.perS[s]++
}

// libOpen counts a socket-open of a library loop at t.
func (c *counter) libOpen(t int64) {
	c.open(t)
	c.libOpens++
}

func (c *counter) failed(class auditfmt.FailureClass) { c.failures[class]++ }

// stats returns the figures of the finished fleet f.
func (c *counter) stats(f *fleet) Stats {
	st := Stats{Devices: f.cfg.Devices, Records: c.records,
		Failed:          c.failures[auditfmt.FailTransient],
		RefusedOverload: c.failures[auditfmt.FailOverload],
		RefusedAuth:     c.failures[auditfmt.FailAuth],
		BrokerUp:        f.cfg.brokerUp(), Horizon: f.cfg.Horizon}
	first := -1
	upS := int((f.cfg.brokerUp() + time.Second - 1) / time.Second)
	for s, n := range c.perS {
		if s >= upS && n > st.PeakUpPerS {
			st.PeakUpPerS, st.PeakUpAt = n, time.Duration(s)*time.Second
		}
		st.Attempts += n // the library's opens are taken out below
		if n > 0 && first < 0 {
			first = s
		}
		if n > st.PeakPerS {
			st.PeakPerS, st.PeakAt = n, time.Duration(s)*time.Second
		}
	}
	if first >= 0 {
		last := len(c.perS) - 1 // perS ends at the last second with an open
		st.MeanPerS = float64(st.Attempts) / float64(last-first+1)
		st.Attempts -= c.libOpens
		st.LibraryAttempts = c.libOpens
		st.PeakToMean = float64(st.PeakPerS) / st.MeanPerS
	}
	ttr := make([]int64, len(f.up))
	for i := range f.up {
		ttr[i] = f.up[i].upAt
		if f.lib != nil {
			ttr[i] = f.lib.state[f.up[i].index()].upAt
		}
	}
	st.Recovered, st.NotRecovered = len(ttr), f.cfg.Devices-len(ttr)
	slices.Sort(ttr)
	rank := func(p float64) time.Duration {
		if len(ttr) == 0 {
			return 0
		}
		k := int(math.Ceil(p*float64(len(ttr)))) - 1
		return time.Duration(ttr[min(max(k, 0), len(ttr)-1)]) * time.Microsecond
	}
	st.TTR50, st.TTR90, st.TTR99, st.TTRMax = rank(0.50), rank(0.90), rank(0.99), rank(1)
	return st
}
