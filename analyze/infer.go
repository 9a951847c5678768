package analyze

import (
	"math"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// inferredKeys are the policy keys infer can find in a log.
var inferredKeys = map[string]bool{"delay": true, "base_delay_s": true, "max_delay_s": true, "multiplier": true}

// inferAttempts is how many attempt numbers inference looks at.
const inferAttempts = 32

// inference gathers, per attempt number, what the backoff_wait records
// say: the largest delay and ceiling, and whether every device drew the
// same delay.
type inference struct {
	n        [inferAttempts]int
	maxDelay [inferAttempts]float64
	maxCeil  [inferAttempts]float64
	first    [inferAttempts]float64
	varied   [inferAttempts]bool
	cap      float64 // the largest delay or ceiling overall
}

func (in *inference) add(d *Device) {
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if a.AfterErr == auditfmt.FailAuth || a.Number < 0 {
			continue // drawn on the authentication schedule
		}
		in.cap = max(in.cap, a.Delay)
		if !math.IsNaN(a.Ceiling) {
			in.cap = max(in.cap, a.Ceiling)
		}
		if a.Number >= inferAttempts {
			continue
		}
		k := a.Number
		if in.n[k] == 0 {
			in.first[k] = a.Delay
		} else if a.Delay != in.first[k] {
			in.varied[k] = true
		}
		in.n[k]++
		in.maxDelay[k] = max(in.maxDelay[k], a.Delay)
		if !math.IsNaN(a.Ceiling) {
			in.maxCeil[k] = max(in.maxCeil[k], a.Ceiling)
		}
	}
}

// policy returns the policy the log shows, or nil if it shows none: the
// ceilings the records carry when they do, else the largest delay drawn
// at each attempt; jitter when devices drew different delays at one
// attempt number.
func (in *inference) policy() (*policy.Policy, []string) {
	if in.n[0] == 0 || in.n[1] == 0 {
		return nil, nil
	}
	top := in.maxDelay
	if in.maxCeil[0] > 0 && in.maxCeil[1] > 0 {
		top = in.maxCeil
	}
	jitter := false
	for k := range inferAttempts {
		jitter = jitter || in.varied[k] && in.n[k] > 1
	}
	p := &policy.Policy{Name: "inferred", Delay: policy.FullJitter, BaseDelayS: top[0], MaxDelayS: max(in.cap, top[0]), Multiplier: 1}
	if top[0] > 0 {
		p.Multiplier = max(1, math.Round(top[1]/top[0]*100)/100)
	}
	if !jitter {
		p.Delay = policy.Exponential
		if p.Multiplier == 1 {
			p.Delay = policy.Fixed
		}
	}
	if p.Validate() != nil {
		return nil, nil
	}
	return p, []string{"delay", "base_delay_s", "max_delay_s", "multiplier"}
}

// inferRecords is how many records infer reads: the devices it takes
// until it has that many (the dataset's order, by client_id, is no order
// of behaviour, so the first devices are a fair sample of the fleet).
const inferRecords = 1 << 20

// infer reads the first devices of the dataset in dir, up to about
// inferRecords records, to infer its policy.
func infer(dir string) (*policy.Policy, []string, error) {
	var in inference
	n := 0
	_, _, err := devices(dir, func(d *Device) error {
		in.add(d)
		if n += len(d.Events); n >= inferRecords {
			return errEnough
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	p, keys := in.policy()
	return p, keys, nil
}
