package analyze

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/brokerlog"
	"github.com/stormaudit/stormaudit/policy"
)

// TestPresenceFromRealBrokerLog: real Python paho clients with retained
// wills and status, a real Mosquitto logging everything with persistence
// (testdata/realclients/paho-py-presence): a silent link the broker
// noticed by keepalive, then the broker killed. The presence check finds
// agrees with the broker's own lines, read here apart from brokerlog:
// after the silent link every device's will went out at its keepalive
// timeout; after the kill none did, and each was shown online until the
// restarted broker accepted it again.
//
// paho-py-outbox is the same without persistence, killed 30 s down: its
// devices came back over a minute, and presence flags the kill (p50 40.3 s
// against twice the keepalive, 40 s).
func TestPresenceFromRealBrokerLog(t *testing.T) {
	for _, tc := range []struct {
		rec     string
		flagged int
	}{{"paho-py-presence", 0}, {"paho-py-outbox", 1}} {
		t.Run(tc.rec, func(t *testing.T) { presenceAgrees(t, tc.rec, tc.flagged) })
	}
}

// presenceAgrees checks the presence of the recording rec against its
// broker's lines, and that the rule flagged that many incidents.
func presenceAgrees(t *testing.T, rec string, flagged int) {
	dir := filepath.Join("..", "testdata", "realclients", rec)
	blog := brokerLogFile(t, filepath.Join(dir, "broker.log"))
	pol, err := policy.Load(filepath.Join(dir, "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	res := checkFilesWith(t, t.TempDir(), Options{Broker: []*BrokerLog{blog}, Policy: &pol}, filepath.Join(dir, "clients.ndjson"))
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 2 {
		t.Fatalf("%d incidents, want 2: the silent link and the kill", len(incs))
	}
	truth := readPresenceTruth(t, filepath.Join(dir, "broker.log"))
	for k, byDev := range []map[string]time.Time{truth.timeouts, truth.backAfterKill} {
		var want []time.Time
		for _, at := range byDev {
			want = append(want, at)
		}
		in := &incs[k]
		p := in.Broker.Presence
		if p == nil {
			t.Fatalf("incident %d: no presence", k+1)
		}
		if p.From != in.Broker.LostAt || p.From == NoTime {
			t.Errorf("incident %d: presence counted from %s, want the broker's dating %s", k+1, fmtTime(p.From), fmtTime(in.Broker.LostAt))
		}
		var gaps []time.Duration
		for _, at := range want {
			gaps = append(gaps, at.Sub(time.Unix(0, p.From)))
		}
		slices.Sort(gaps)
		p50, top := gaps[(len(gaps)-1)/2], gaps[len(gaps)-1]
		if p.Devices != 200 || len(gaps) != 200 || (p.Online50-p50).Abs() > time.Second || (p.OnlineMax-top).Abs() > time.Second {
			t.Errorf("incident %d: %d devices with a will, online while down p50 %v, max %v; the broker's lines: %d, p50 %v, max %v",
				k+1, p.Devices, p.Online50, p.OnlineMax, len(gaps), p50, top)
		}
		if wills := []int{len(truth.timeouts), 0}[k]; p.Wills != wills {
			t.Errorf("incident %d: %d wills sent, want %d", k+1, p.Wills, wills)
		}
		how := []string{PresenceWill, PresenceBack}[k]
		for _, w := range p.Windows { // device by device, against its own line
			// within Mosquitto's 1 s stamp: a line the recorder read late
			// keeps it, and the recorder's stamp is then a little after
			if at, ok := byDev[w.Device]; !ok || w.How != how || time.Unix(0, w.Until).Sub(at).Abs() > time.Second+100*time.Millisecond {
				t.Errorf("incident %d: %s shown online until %s (%s); its line: %v %s", k+1, w.Device, fmtTime(w.Until), w.How, ok, at)
			}
		}
		if p.OfflineUp != 0 || p.Still != 0 {
			t.Errorf("incident %d: %d shown offline once back, %d still online: every device said online on its return", k+1, p.OfflineUp, p.Still)
		}
	}
	if incs[1].Broker.Presence.Back != 200 {
		t.Errorf("after the kill %d came back before any will or status, want all 200", incs[1].Broker.Presence.Back)
	}
	if res.Summary.ByRule[presenceID] != flagged {
		t.Errorf("presence flagged %d, want %d", res.Summary.ByRule[presenceID], flagged)
	}
}

// presenceTruth is what the broker's lines say of presence, read apart
// from brokerlog: each device's keepalive timeout during the silent link,
// and each one's first accept after the broker's restart.
type presenceTruth struct {
	timeouts, backAfterKill map[string]time.Time // by client id
}

func readPresenceTruth(t *testing.T, path string) presenceTruth {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := regexp.MustCompile(`^(\S+) (?:\d+: )?(.*)$`)
	timeout := regexp.MustCompile(`^Client (\S+) has exceeded timeout, disconnecting\.$`)
	accept := regexp.MustCompile(`^New client connected from \S+ as (\S+) `)
	tr := presenceTruth{map[string]time.Time{}, map[string]time.Time{}}
	restarted := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		switch msg := m[2]; {
		case msg == "corpus: restarting the broker":
			restarted = true
		case timeout.MatchString(msg) && !restarted:
			tr.timeouts[timeout.FindStringSubmatch(msg)[1]] = at
		case restarted && accept.MatchString(msg):
			if id := accept.FindStringSubmatch(msg)[1]; tr.backAfterKill[id].IsZero() && !strings.HasPrefix(id, "corpus-") { // not the recorder's own clients
				tr.backAfterKill[id] = at
			}
		}
	}
	return tr
}

// TestPresenceEdges: a device lost with a will that the broker never
// hears of again is shown online to the end (it is the worst case, not
// one to leave out); one whose connection the broker closed before the
// loss (its will went out then) is not shown online at all; an accept at
// the next incident's loss is that incident's.
func TestPresenceEdges(t *testing.T) {
	dir := filepath.Join("testdata", "rules", "presence")
	audit, err := os.ReadFile(filepath.Join(dir, "positive.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	broker, err := os.ReadFile(filepath.Join(dir, "positive-broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	// dev-04 never comes back; dev-03's connection was timed out before the loss
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(audit)), "\n") {
		if !strings.Contains(l, `"dev-04"`) || !strings.Contains(l, `"connected"`) || strings.Contains(l, "14:17:00") {
			keep = append(keep, l)
		}
	}
	var lines []string
	restarted := false
	for _, l := range strings.Split(strings.TrimSpace(string(broker)), "\n") {
		restarted = restarted || strings.Contains(l, " starting")
		if restarted && (strings.Contains(l, "41003") || strings.Contains(l, "dev-04")) { // dev-04's return
			continue
		}
		lines = append(lines, l)
		if strings.Contains(l, "'status/dev-04'") && len(lines) < 40 {
			lines = append(lines, strings.SplitN(l, ":", 2)[0]+": Client dev-03 has exceeded timeout, disconnecting.")
		}
	}
	blog, err := LoadBrokerLog(strings.NewReader(strings.Join(lines, "\n")+"\n"), "broker.log", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := checkLogWith(t, strings.Join(keep, "\n")+"\n", Options{Broker: []*BrokerLog{blog}})
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 || incs[0].Broker == nil || incs[0].Broker.Presence == nil {
		t.Fatalf("incidents %+v", incs)
	}
	p := incs[0].Broker.Presence
	if p.Devices != 3 || p.Still != 1 || p.Back != 2 {
		t.Errorf("presence %+v: want 3 devices with a will at the loss (dev-03's went out before), dev-04 still shown online, 2 back", p)
	}
}
