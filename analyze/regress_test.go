package analyze

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/policy"
)

// TestClockStepBackBeforeConnect: a device whose connected record is
// stamped before its loss (its clock stepped back) recovered; it is not
// starving, and its time to recover is 0, not negative.
func TestClockStepBackBeforeConnect(t *testing.T) {
	res := checkFiles(t, t.TempDir(), nil, filepath.Join("testdata", "regress", "clock-step-back-before-connect.ndjson"))
	for _, f := range of(res, "starvation") {
		if f.Device == "skew" {
			t.Errorf("skew flagged as starving:%s", describe([]Finding{f}))
		}
	}
	st := res.Summary.Fleet
	if st.Recovered != st.Lost || st.TTR.At(0) < 0 {
		t.Errorf("recovered %d of %d, shortest TTR %v; want all, none negative", st.Recovered, st.Lost, st.TTR.At(0))
	}
}

// TestBefore1970: times before 1970 are negative; they are times all the
// same, not the marker of a time that has not come.
func TestBefore1970(t *testing.T) {
	res := checkFiles(t, t.TempDir(), nil, filepath.Join("testdata", "regress", "before-1970.ndjson"))
	if len(res.Findings) > 0 {
		t.Errorf("unexpected findings:%s", describe(res.Findings))
	}
	if st := res.Summary.Fleet; st.Lost != 2 || st.Recovered != 2 {
		t.Errorf("%d of %d devices recovered, want 2 of 2", st.Recovered, st.Lost)
	}
}

// TestReorderedReset: two threads of one client wrote a counter reset 3 ms
// before the connected record that caused it. The reset is judged as the
// CONNACK's, the connect as its attempt's, and the summary says what was
// put back in order.
func TestReorderedReset(t *testing.T) {
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		t.Fatal(err)
	}
	res := checkFiles(t, t.TempDir(), &pol, filepath.Join("testdata", "regress", "reordered-reset.ndjson"))
	if len(res.Findings) > 0 {
		t.Errorf("unexpected findings:%s", describe(res.Findings))
	}
	found := false
	for _, n := range res.Summary.Notes {
		found = found || strings.HasPrefix(n, "timelines: 1 connected record on 1 device came just after a counter reset it caused, written up to 3ms before it")
	}
	if !found {
		t.Errorf("notes %q do not say what was reordered", res.Summary.Notes)
	}
}

// TestResetBeforeItsOwnConnect: a counter that drops to 0 at a
// backoff_wait whose own socket-open the connected record 40 ms later
// ends is a reset without CONNACK, not two threads' records out of order
// (a regression: the connect was moved before the reset, which hid it and
// made a new attempt while connected).
func TestResetBeforeItsOwnConnect(t *testing.T) {
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		t.Fatal(err)
	}
	res := checkFiles(t, t.TempDir(), &pol, filepath.Join("testdata", "regress", "reset-before-own-connect.ndjson"))
	if len(of(res, "reset-without-connack")) != 1 {
		t.Errorf("want one reset-without-connack finding, got:%s", describe(res.Findings))
	}
	for _, rule := range []string{"unscheduled-connect", "reconnect-while-connected", "silent-give-up"} {
		if fs := of(res, rule); len(fs) > 0 {
			t.Errorf("%s:%s", rule, describe(fs))
		}
	}
}

// TestIncidentsCenturiesApart: losses 326 years apart are not one
// incident (a regression: their difference overflowed).
func TestIncidentsCenturiesApart(t *testing.T) {
	var ic incidentCounter
	for i, at := range []int64{-8520336000e9, -8520336000e9 + 1e6, -8520336000e9 + 2e6, 1764500000e9} {
		d := &Device{ID: fmt.Sprint("d", i), Episodes: []Episode{{Start: at, Lost: at, End: NoTime, First: 0, Last: -1}}}
		ic.add(d)
	}
	incs, _, _ := ic.incidents(false)
	if len(incs) != 1 || incs[0].DevicesLost != 3 || incs[0].LastLoss != -8520336000e9+2e6 {
		t.Errorf("incidents %+v, want one of the 3 devices in 1700", incs)
	}
}
