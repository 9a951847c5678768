package analyze

import (
	"path/filepath"
	"testing"
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
	if st.Recovered != st.Lost || st.TTR[0] < 0 {
		t.Errorf("recovered %d of %d, shortest TTR %v; want all, none negative", st.Recovered, st.Lost, st.TTR[0])
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
