package analyze

import (
	"testing"
	"time"
)

// TestWindow: a window judges the records inside it and counts the
// others; every record is one or the other, and a device with none inside
// is not a device of the check.
func TestWindow(t *testing.T) {
	log := opensAt(1, 2, 3, 10, 11, 20)
	whole := checkLog(t, log, nil)
	for _, tc := range []struct {
		name         string
		since, until time.Duration // from auditStart; 0: unbounded
		devices      int
	}{
		{"since", 9 * time.Second, 0, 3},
		{"until", 0, 9 * time.Second, 6}, // each device's first record is at 0
		{"both", 9 * time.Second, 15 * time.Second, 2},
		{"none inside", 30 * time.Second, 0, 0},
	} {
		var opts Options
		if tc.since > 0 {
			opts.Since = auditStart.Add(tc.since)
		}
		if tc.until > 0 {
			opts.Until = auditStart.Add(tc.until)
		}
		res := checkLogWith(t, log, opts)
		s := res.Summary
		if s.Devices != tc.devices || s.Records+s.Outside != whole.Summary.Records || s.Outside == 0 {
			t.Errorf("%s: %d devices, %d records + %d outside; want %d devices, %d records in all", tc.name, s.Devices, s.Records, s.Outside, tc.devices, whole.Summary.Records)
		}
		if !s.Since.Equal(opts.Since) || !s.Until.Equal(opts.Until) {
			t.Errorf("%s: the summary's window is [%v, %v)", tc.name, s.Since, s.Until)
		}
	}
}
