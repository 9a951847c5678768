// Package demodata holds the built-in sample log that `stormaudit demo`
// runs on: 48 devices on 12 gateways losing the broker for 75 s, with a
// few duplicate and broken lines as real collections have. gen.go made it
// (go run gen.go > incident.ndjson).
package demodata

import _ "embed"

// Incident is the sample log, seed-format NDJSON with some lines wrapped
// in logging envelopes.
//
//go:embed incident.ndjson
var Incident []byte
