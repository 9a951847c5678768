package realcorpus

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
)

// TestRecordLive records a short outage of each Live scenario's kind of
// fleet against a real Mosquitto, as the corpus was recorded, and holds what
// check says to the broker's log. It needs Debian's mosquitto and
// python3-paho-mqtt: without them it is skipped, except under CI (CI set
// in the environment), where it fails.
func TestRecordLive(t *testing.T) {
	if testing.Short() {
		t.Skip("records real fleets for about 40 s")
	}
	tools := DefaultTools()
	if err := exec.Command(tools.Python, "-c", "import paho.mqtt.client").Run(); err != nil || !executable(tools.Mosquitto) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs %s and %s with paho-mqtt (apt-get install mosquitto python3-paho-mqtt)", tools.Mosquitto, tools.Python)
		}
		t.Skipf("needs %s and %s with paho-mqtt", tools.Mosquitto, tools.Python)
	}
	// all at once, each with its own broker: the test takes one recording's time
	var live []Scenario
	for _, sc := range Scenarios {
		if sc.Live {
			live = append(live, sc)
		}
	}
	dirs := make([]string, len(live))
	errs := make([]error, len(live))
	var wg sync.WaitGroup
	for i, sc := range live {
		dirs[i] = t.TempDir()
		wg.Go(func() { errs[i] = Record(sc.Short(), dirs[i], tools) })
	}
	wg.Wait()
	for i, sc := range live {
		sc, dir := sc.Short(), dirs[i]
		t.Run(sc.Name, func(t *testing.T) {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			f, err := os.Open(filepath.Join(dir, BrokerLog))
			if err != nil {
				t.Fatal(err)
			}
			truth, err := ParseBrokerLog(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			ds := filepath.Join(dir, "ds")
			if _, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: filepath.Join(dir, ClientLog)}}, ingest.Options{}); err != nil {
				t.Fatal(err)
			}
			pol, err := policy.Load(filepath.Join(dir, PolicyFile)) // declares its keys, as --policy does
			if err != nil {
				t.Fatal(err)
			}
			res, err := analyze.Check(ds, analyze.Options{Policy: &pol})
			if err != nil {
				t.Fatal(err)
			}
			judgeLive(t, res, truth, sc)
			if t.Failed() {
				keep := filepath.Join(os.TempDir(), "stormaudit-live-"+sc.Name)
				if err := os.CopyFS(keep, os.DirFS(dir)); err == nil {
					t.Logf("the recording is kept in %s", keep)
				}
			}
		})
	}
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode()&0o111 != 0
}

// judgeLive holds a check of a live recording to its broker's log.
func judgeLive(t *testing.T, res *analyze.Result, truth *Truth, sc Scenario) {
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 {
		t.Fatalf("%d incidents, want 1", len(incs))
	}
	in := incs[0]
	if d := time.Duration(in.LostAt - truth.Died.UnixNano()); d < 0 || d > time.Second {
		t.Errorf("incident at %v, %v after the broker's death", time.Unix(0, in.LostAt).UTC(), d)
	}
	if in.DevicesLost != truth.Lost || in.Recovered != len(truth.Reconnected) {
		t.Errorf("%d lost and %d recovered; the broker lost %d and took %d back", in.DevicesLost, in.Recovered, truth.Lost, len(truth.Reconnected))
	}
	if want := Rank(truth.TTR(), 0.5); (in.TTR50 - want).Abs() > 2*time.Second {
		t.Errorf("time to recover p50 %v, the broker's log says %v", in.TTR50, want)
	}
	storm := false
	for _, f := range res.Findings {
		storm = storm || f.Rule == "recovery-storm"
	}
	if want := sc.Mode == "library"; storm != want {
		t.Errorf("recovery-storm fired %v, want %v", storm, want)
	}
	t.Logf("%s: %d devices lost at %v, p50 %v (broker %v), %d findings", sc.Name, in.DevicesLost, time.Duration(in.LostAt-truth.Died.UnixNano()),
		in.TTR50, Rank(truth.TTR(), 0.5), len(res.Findings))
}
