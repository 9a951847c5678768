package analyze

import (
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// ftoa writes a number of seconds as records write them.
func ftoa(s float64) string { return string(auditfmt.AppendFloat(nil, s)) }

// timeText writes Unix ns as RFC 3339 UTC, for explanations.
func timeText(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
