package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/internal/safe"

	"github.com/stormaudit/stormaudit/analyze"
)

// PresenceText says how long an incident's devices were shown online
// while they were down, from the broker's log (docs/rules.md,
// "Presence"); "" when the log shows none of them declaring a will.
func PresenceText(in *analyze.Incident) string {
	p := presenceOf(in)
	if p == nil {
		return ""
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	s := fmt.Sprintf("%s declared a will; shown online while down (from %s) p50 %v, p90 %v, max %v (the limit: %v); "+
		"the broker sent %d of their wills, %d said their presence first, %d came back first, %d still shown online at the end",
		plural(p.Devices, "device"), Time(p.From), ms(p.Online50), ms(p.Online90), ms(p.OnlineMax), p.Limit, p.Wills, p.Said, p.Back, p.Still)
	s += "; longest: " + longestPresence(p, 3)
	if p.OfflineUp > 0 {
		s += fmt.Sprintf("; %s shown offline while connected, up to %v (their will went out and they did not say online again)",
			plural(p.OfflineUp, "device"), ms(p.OfflineUpMax))
	}
	return s
}

// PresenceShort says it in a few words, for a line of the browser and the
// verdict: "shown online while down p50 20s (100 with a will)".
func PresenceShort(in *analyze.Incident) string {
	p := presenceOf(in)
	if p == nil {
		return ""
	}
	return fmt.Sprintf("shown online while down p50 %v, max %v (%d with a will)", p.Online50.Round(time.Second),
		p.OnlineMax.Round(time.Second), p.Devices)
}

func presenceOf(in *analyze.Incident) *analyze.Presence {
	if in.Broker == nil {
		return nil
	}
	return in.Broker.Presence
}

// jsonPresence is an incident's presence (broker.presence).
type jsonPresence struct {
	From         string  `json:"from"`
	Devices      int     `json:"devices_with_will"`
	Wills        int     `json:"wills_sent"`
	Said         int     `json:"said_first"`
	Back         int     `json:"back_first"`
	Still        int     `json:"still_online_at_end"`
	Online50S    float64 `json:"online_while_down_p50_s"`
	Online90S    float64 `json:"online_while_down_p90_s"`
	Online99S    float64 `json:"online_while_down_p99_s"`
	OnlineMaxS   float64 `json:"online_while_down_max_s"`
	LimitS       float64 `json:"limit_s"`
	OfflineUp    int     `json:"offline_while_up"`
	OfflineUpMax float64 `json:"offline_while_up_max_s"`
	// Devices' own windows, by client id
	Windows []jsonPresenceWindow `json:"windows"`
}

// jsonPresenceWindow is one device's time shown online while down.
type jsonPresenceWindow struct {
	Device  string  `json:"device"`
	Until   string  `json:"until"`
	OnlineS float64 `json:"online_while_down_s"`
	How     string  `json:"ended_by"`
}

func jsonPresenceOf(p *analyze.Presence) *jsonPresence {
	if p == nil {
		return nil
	}
	js := &jsonPresence{From: Time(p.From), Devices: p.Devices, Wills: p.Wills, Said: p.Said, Back: p.Back, Still: p.Still,
		Online50S: p.Online50.Seconds(), Online90S: p.Online90.Seconds(), Online99S: p.Online99.Seconds(), OnlineMaxS: p.OnlineMax.Seconds(),
		LimitS: p.Limit.Seconds(), OfflineUp: p.OfflineUp, OfflineUpMax: p.OfflineUpMax.Seconds(), Windows: []jsonPresenceWindow{}}
	for _, w := range p.Windows {
		js.Windows = append(js.Windows, jsonPresenceWindow{Device: w.Device, Until: Time(w.Until),
			OnlineS: time.Duration(w.Until - p.From).Seconds(), How: w.How})
	}
	return js
}

// longestPresence names the devices shown online longest while down, at
// most n: "pypres-0042 48.463s (back)".
func longestPresence(p *analyze.Presence, n int) string {
	ws := slices.Clone(p.Windows)
	slices.SortStableFunc(ws, func(a, b analyze.PresenceWindow) int { return cmp.Compare(b.Until, a.Until) })
	var parts []string
	for _, w := range ws[:min(n, len(ws))] {
		parts = append(parts, fmt.Sprintf("%s %v (%s)", safe.Text(w.Device), time.Duration(w.Until-p.From).Round(time.Millisecond), w.How))
	}
	return strings.Join(parts, ", ")
}
