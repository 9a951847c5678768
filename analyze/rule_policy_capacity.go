package analyze

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// LostTogether is how close the starts of the outages of devices that
// lost their connection together lie: the policy-capacity rule takes the
// most outage starts in any window of this width as the fleet that
// reconnects at once.
const LostTogether = time.Second

// capacityTick is the first window the policy-capacity rule assumes for
// a rule without jitter: the logging tick, "one instant".
const capacityTick = time.Millisecond

// capacityRule flags a policy whose first retry window is too narrow for
// the fleet that lost its connection together: N devices spreading their
// first retries over W seconds put about N/W connects per second on the
// broker. It counts outage starts in a sparse histogram: memory grows
// with the time span they cover.
type capacityRule struct {
	Ready  bool
	On     bool
	Budget float64
	Starts *timeHist
}

func (r *capacityRule) merge(next Rule) {
	n := next.(*capacityRule)
	if !r.Ready {
		*r = *n
		return
	}
	r.Starts.merge(n.Starts)
}

func (r *capacityRule) Info() RuleInfo {
	return RuleInfo{ID: "policy-capacity", Severity: Warning,
		Needs: [][]string{{"delay"}, {"connect_budget_per_s"}}, Uses: []string{"connect_budget_window_s"},
		Title: "the policy's first retry window is too narrow for the fleet",
		Help: "N devices that lost their connection together draw their first retry from the policy's first " +
			"window of W seconds, which puts about N/W connects per second on the broker; flagged when that is above " +
			"connect_budget_per_s. Size the base delay (and the cap) to the fleet, not to one device."}
}

func (r *capacityRule) init(c *Context) bool {
	if r.Ready {
		return r.On
	}
	r.Ready = true
	// a valid policy with a delay rule has the numbers the rule needs
	_, okDelay := c.Param("policy-capacity", "delay", func(*policy.Policy) float64 { return 0 })
	b, _, okBudget := budgetOf(c, "policy-capacity")
	r.On, r.Budget = okDelay && okBudget, b
	if r.On {
		r.Starts = newTimeHist(int64(time.Millisecond))
	}
	return r.On
}

func (r *capacityRule) Device(c *Context, d *Device) {
	if !r.init(c) {
		return
	}
	last := int64(math.MinInt64)
	for _, ep := range d.Episodes {
		if !ep.Loss() || last != math.MinInt64 && ep.Start-last < int64(LostTogether) {
			continue // a start is not a loss; a device counts once in any window
		}
		last = ep.Start
		r.Starts.add(ep.Start, d.Events[ep.First].Ref, d.ID)
	}
}

func (r *capacityRule) Finish(c *Context) {
	if !r.On {
		return
	}
	k := int64(LostTogether) / r.Starts.Res
	var n, at int64
	r.Starts.windows(k, func(first, _, m int64) {
		if m > n {
			n, at = m, first
		}
	})
	if n == 0 {
		return
	}
	lo, hi := c.Policy.Bounds(0, 0)
	w := hi - lo
	bw := c.Policy.ConnectBudgetWindowS
	if bw <= 0 {
		bw = 1
	}
	spread := max(w, bw)
	rate := float64(n) / spread
	if rate <= r.Budget {
		return
	}
	from := at * r.Starts.Res
	c.Report(r.finding(c, capacityLoad{n: n, from: from, lo: lo, hi: hi, w: w, bw: bw, rate: rate}))
}

// capacityLoad is what the policy-capacity rule found: n devices that
// lost their connection within LostTogether from from, drawing their
// first retries from [lo, hi] (a window w wide), and the rate that puts
// on the broker, counted over the budget window bw.
type capacityLoad struct {
	n      int64
	from   int64
	lo, hi float64
	w, bw  float64
	rate   float64
}

func (r *capacityRule) finding(c *Context, l capacityLoad) Finding {
	p := c.Policy
	need := float64(l.n) / r.Budget
	msg := fmt.Sprintf("%d devices that lost their connection together put about %s connects/s on the broker under the policy's first retry window of %s s, above connect_budget_per_s %s",
		l.n, fmtNum(math.Round(l.rate)), fmtNum(l.w), fmtNum(r.Budget))
	var x strings.Builder
	fmt.Fprintf(&x, "N = %d devices lost their connection within %s s of each other (the largest such group; outages starting from %s). ",
		l.n, durS(int64(LostTogether)), timeText(l.from))
	fmt.Fprintf(&x, "Under the policy (%s: %s), attempt 0 draws its delay from [%s, %s] s: a first window W = %s s. ",
		paramOrigin(c), delayTerms(p), fmtNum(l.lo), fmtNum(l.hi), fmtNum(l.w))
	switch {
	case l.w == 0:
		fmt.Fprintf(&x, "All N retry in one instant (within the %s s logging tick), inside one %s s budget window: N/%s = %s connects/s, ",
			durS(int64(capacityTick)), fmtNum(l.bw), fmtNum(l.bw), fmtNum(l.rate))
	case l.w < l.bw:
		fmt.Fprintf(&x, "All N retry within %s s, inside one %s s budget window: N/%s = %s connects/s, ",
			fmtNum(l.w), fmtNum(l.bw), fmtNum(l.bw), fmtNum(l.rate))
	default:
		fmt.Fprintf(&x, "That puts about N/W = %d/%s = %s connects/s on the broker, ", l.n, fmtNum(l.w), fmtNum(l.rate))
	}
	fmt.Fprintf(&x, "above connect_budget_per_s = %s (declared, counted over %s s). ", fmtNum(r.Budget), fmtNum(l.bw))
	fmt.Fprintf(&x, "To fit, the first window must be at least N/budget = %d/%s = %s s: %s",
		l.n, fmtNum(r.Budget), fmtNum(need), capacitySuggestion(p, need))
	refs := make([]Ref, 0, MaxRefs)
	for _, s := range r.Starts.samplesIn(l.from, l.from+int64(LostTogether), MaxRefs) {
		refs = append(refs, s.Ref)
	}
	return Finding{Rule: "policy-capacity", Kind: "policy-capacity/over-budget", Severity: Warning, Device: Fleet, Start: l.from,
		End: l.from + int64(LostTogether) + nanos(l.hi), Message: msg, Explanation: x.String(), Records: refs}
}

// capacitySuggestion says what policy would spread the first retries over
// at least need seconds.
func capacitySuggestion(p *policy.Policy, need float64) string {
	need = math.Ceil(need*1000) / 1000
	switch {
	case p.Delay == policy.FullJitter && p.ImmediateFirstRetry:
		return fmt.Sprintf("drop immediate_first_retry (its first retry waits 0) and draw from at least base_delay_s = %s (max_delay_s >= %s).",
			fmtNum(need+p.MinDelayS), fmtNum(need+p.MinDelayS))
	case p.Delay == policy.FullJitter:
		b := need + p.MinDelayS
		return fmt.Sprintf("for example base_delay_s = %s (max_delay_s >= %s), keeping min_delay_s = %s.", fmtNum(b), fmtNum(b), fmtNum(p.MinDelayS))
	case p.Delay == policy.EqualJitter && !p.ImmediateFirstRetry:
		return fmt.Sprintf("equal jitter draws from [base/2, base], so base_delay_s = %s (max_delay_s >= %s).", fmtNum(2*need), fmtNum(2*need))
	case p.Delay == policy.Decorrelated:
		return fmt.Sprintf("decorrelated jitter first draws from [base, min(cap, 3·base)], so base_delay_s = %s with max_delay_s >= %s.",
			fmtNum(need/2), fmtNum(3*need/2))
	}
	return fmt.Sprintf("the %s rule draws no jitter for the first retry, so every device retries together; use full_jitter with base_delay_s = %s (max_delay_s >= %s).",
		p.Delay, fmtNum(need), fmtNum(need))
}

// delayTerms names the policy keys that set the first retry window.
func delayTerms(p *policy.Policy) string {
	s := fmt.Sprintf("delay %s, base_delay_s %s", p.Delay, fmtNum(p.BaseDelayS))
	if p.Delay != policy.Fixed && p.Delay != policy.None {
		s += fmt.Sprintf(", max_delay_s %s", fmtNum(p.MaxDelayS))
	}
	if p.Delay == policy.Exponential || p.Delay == policy.FullJitter || p.Delay == policy.EqualJitter {
		s += fmt.Sprintf(", multiplier %s", fmtNum(p.Multiplier))
	}
	if p.MinDelayS > 0 {
		s += fmt.Sprintf(", min_delay_s %s", fmtNum(p.MinDelayS))
	}
	if p.ImmediateFirstRetry {
		s += ", immediate_first_retry"
	}
	return s
}
