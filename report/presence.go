package report

import (
	"fmt"
	"time"

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
}

func jsonPresenceOf(p *analyze.Presence) *jsonPresence {
	if p == nil {
		return nil
	}
	return &jsonPresence{From: Time(p.From), Devices: p.Devices, Wills: p.Wills, Said: p.Said, Back: p.Back, Still: p.Still,
		Online50S: p.Online50.Seconds(), Online90S: p.Online90.Seconds(), Online99S: p.Online99.Seconds(), OnlineMaxS: p.OnlineMax.Seconds(),
		LimitS: p.Limit.Seconds(), OfflineUp: p.OfflineUp, OfflineUpMax: p.OfflineUpMax.Seconds()}
}
