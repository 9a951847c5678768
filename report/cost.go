package report

import (
	"fmt"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
)

// costWhat says what each kind of cost counts, as the text says it.
var costWhat = [...]string{
	analyze.CostDropped: "measurements dropped from a full outbox",
	analyze.CostExpired: "queued commands that came expired and were ignored",
	analyze.CostTwice:   "messages handed to the application twice",
}

// CostWhat says what cost kind k counts: "measurements dropped from a
// full outbox".
func CostWhat(k int) string { return costWhat[k] }

// CostText says what an incident cost its devices beyond their connection
// (docs/rules.md, "What an outage cost"), from their own counts: "" when
// none of them records any of the fields.
func CostText(in *analyze.Incident) string {
	var parts []string
	for k, c := range in.Cost {
		if c.Reporting == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s: %d of the %s that count them)", c.Messages, costWhat[k],
			analyze.CostField(k), c.Devices, plural(c.Reporting, "device")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "cost: " + strings.Join(parts, "; ")
}

// jsonCost is one kind of an incident's cost.
type jsonCost struct {
	Messages  int64 `json:"messages"`
	Devices   int   `json:"devices"`
	Reporting int   `json:"devices_reporting"`
}

// jsonCostOf returns the kinds of an incident's cost its devices record,
// by field; nil when they record none.
func jsonCostOf(in *analyze.Incident) map[string]jsonCost {
	var out map[string]jsonCost
	for k, c := range in.Cost {
		if c.Reporting == 0 {
			continue
		}
		if out == nil {
			out = map[string]jsonCost{}
		}
		out[analyze.CostField(k)] = jsonCost{c.Messages, c.Devices, c.Reporting}
	}
	return out
}

// costShort names each kind of cost in CostShort.
var costShort = [...]string{analyze.CostDropped: "dropped", analyze.CostExpired: "expired", analyze.CostTwice: "twice"}

// CostShort says an incident's cost in a few words, for a line of the
// browser: "dropped 120 by 4, expired 3 by 1, twice 0"; "" when none of
// its devices records any of the fields.
func CostShort(in *analyze.Incident) string {
	var parts []string
	for k, c := range in.Cost {
		if c.Reporting > 0 {
			parts = append(parts, fmt.Sprintf("%s %d by %d", costShort[k], c.Messages, c.Devices))
		}
	}
	return strings.Join(parts, ", ")
}
