package afteraction

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/report"
)

// maxListed bounds the incidents the page lists (and marks on the
// whole log's chart), and the sessions, outages and findings a timeline
// lists: a flapping broker must not make the page grow without bound.
const maxListed = 20

// chartsOf draws the page's charts and states the fleet and its incidents.
func chartsOf(pg *page, rep *Report, o Options) error {
	ov := rep.Overview
	st := ov.Result.Summary.Fleet
	budget := 0.0
	if p := ov.Result.Summary.Policy.Policy; p != nil {
		budget = p.ConnectBudgetPerS
	}
	fleetOf(pg, st)
	for i := range st.Incidents[:min(len(st.Incidents), maxListed)] {
		v := incidentOf(&st.Incidents[i], i+1)
		if v.Clocks != "" {
			v.Clocks += " " + strings.TrimSpace(strings.ReplaceAll(report.ClockText(st.ClockOffsets), "clocks:   ", ""))
		}
		pg.Incidents = append(pg.Incidents, v)
	}
	pg.MoreIncidents = len(st.Incidents) - len(pg.Incidents)
	var err error
	if pg.RulesChart, err = rulesChart(pg.Rules); err != nil {
		return err
	}
	if err := stripOf(pg, rep, o); err != nil {
		return err
	}
	if err := ttrOf(pg, ov); err != nil {
		return err
	}
	from, to, outside, ok := chartRange(&ov.Activity, st.Incidents)
	if !ok {
		return nil
	}
	numbers := make([]int, len(st.Incidents))
	for i := range numbers {
		numbers[i] = i + 1
	}
	var width time.Duration
	var accepts func(from, to int64) int
	if w := st.Witness; w != nil {
		accepts = w.AcceptsIn
	}
	pg.Activity.SVG, width, err = activityChart(activity{title: "Socket-opens and connects over the whole log", act: &ov.Activity,
		from: from, to: to, budgetPerS: budget, incidents: st.Incidents, numbers: numbers, accepts: accepts})
	if err != nil {
		return err
	}
	pg.Activity.Key = activityKey(budget > 0, accepts != nil)
	pg.Activity.Caption = "Socket-opens per " + widthText(width) + ", stacked by outcome; connects (connected records) per " +
		widthText(width) + " as a line"
	if budget > 0 {
		pg.Activity.Caption += "; the dashed line is the broker's budget, " + fmt.Sprint(budget) + " connects/s"
	}
	if accepts != nil {
		pg.Activity.Caption += "; the dotted line is the connections the broker's own log says it accepted"
	}
	pg.Activity.Caption += "; incidents: a solid line at the loss, a dotted one at the broker's return."
	if outside > 0 {
		pg.Activity.Caption += fmt.Sprintf(" %d socket-opens and connects far from the rest (device clocks off) are outside the chart.", outside)
	}
	for i := range pg.Incidents[:min(len(pg.Incidents), o.Incidents)] {
		in := &st.Incidents[i]
		v := &pg.Incidents[i]
		v.Chart.SVG, width, err = activityChart(activity{title: fmt.Sprintf("Incident %d", i+1), act: &ov.Activity,
			from: in.LostAt - int64(5*time.Second), to: incidentEnd(st.Incidents, i, to), budgetPerS: budget,
			incidents: []analyze.Incident{*in}, numbers: []int{i + 1}, accepts: accepts})
		if err != nil {
			return err
		}
		v.Chart.Key = activityKey(budget > 0, accepts != nil)
		v.Chart.Caption = "From 5 s before the loss to the last recovery (or the next incident), per " + widthText(width) + "."
		if v.Stages, err = stagesChart(fmt.Sprintf("Incident %d: what the devices met, by stage", i+1), ov.Activity.Opens,
			in.LostAt-int64(5*time.Second), incidentEnd(st.Incidents, i, to)); err != nil {
			return err
		}
	}
	return nil
}

// fleetOf states the fleet's figures, as check's summary does.
func fleetOf(pg *page, st *analyze.FleetStats) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	pg.Fleet = []kv{
		{"devices", fmt.Sprint(st.Devices)},
		{"socket-opens", fmt.Sprint(st.Attempts)},
		{"recovered", fmt.Sprintf("%d of %d devices that lost the connection", st.Recovered, st.Lost)},
	}
	if st.Peak > 0 {
		pg.Fleet = append(pg.Fleet, kv{"socket-opens peak", fmt.Sprintf("%d in %v at %s (the broker up or not)", st.Peak, st.Window, report.Time(st.PeakAt))})
	}
	if st.Flushed > 0 {
		pg.Fleet = append(pg.Fleet, kv{"outbox flush", fmt.Sprintf("%d messages; the flush peaked at %d in 1s at %s", st.Flushed, st.FlushPeak, report.Time(st.FlushPeakAt))})
	}
	if st.Redelivered > 0 {
		pg.Fleet = append(pg.Fleet, kv{"broker redelivery", fmt.Sprintf("%d messages; the redelivery peaked at %d in 1s at %s",
			st.Redelivered, st.RedeliveryPeak, report.Time(st.RedeliveryPeakAt))})
	}
	if st.TTR.Len() > 0 {
		pg.Fleet = append(pg.Fleet, kv{"time to recover", fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s; fairness %.2f (Jain's index of the times to recover: 1 when every device took as long, 1/n when one took all)%s",
			ms(st.TTR50), ms(st.TTR90), ms(st.TTR99), ms(st.TTRMax), st.Fairness, report.EstimateText(&st.TTR))})
	}
}

// ttrOf draws the time-to-recover CDFs: the fleet's over all its losses,
// and each of the first incidents' over the devices it took down.
func ttrOf(pg *page, ov *analyze.Overview) error {
	st := ov.Result.Summary.Fleet
	if st.TTR.Len() == 0 {
		return nil
	}
	losses := 0
	for _, d := range ov.Devices {
		losses += d.Losses
	}
	n := st.TTR.Len()
	series := []cdfSeries{{name: fmt.Sprintf("fleet: %d of %d losses recovered", n, max(losses, n)), n: n, at: st.TTR.At, losses: losses}}
	for i := range st.Incidents {
		if in := &st.Incidents[i]; len(st.Incidents) > 1 && len(series) < 6 {
			series = append(series, cdfSeries{name: fmt.Sprintf("incident %d: %d of %d", i+1, in.TTR.Len(), in.DevicesLost), n: in.TTR.Len(),
				at: in.TTR.At, losses: in.DevicesLost})
		}
	}
	var err error
	pg.TTR.SVG, pg.TTR.Key, err = ttrChart(series)
	pg.TTR.Caption = "For each loss, the time from the device's own loss to its first successful connect after it; " +
		"a curve ends below 1 by the share of losses no connect ended."
	return err
}

// chartRange returns the span the whole log's chart covers: the fleet's
// socket-opens and connects, without the 0.1% at either end when those
// are far from the rest (a device clock years off must not squeeze the
// incident into one bar), and every incident; at most MaxBuckets of the
// widest bucket, ending at its end. outside counts what it leaves out.
func chartRange(act *analyze.Activity, incs []analyze.Incident) (from, to int64, outside int, ok bool) {
	opens := make([]int64, len(act.Opens))
	for i, o := range act.Opens {
		opens[i] = o.At
	}
	from, to = analyze.NoTime, analyze.NoTime
	first, last := int64(analyze.NoTime), int64(analyze.NoTime)
	for _, ts := range [][]int64{opens, act.Connects} {
		if len(ts) == 0 {
			continue
		}
		lo, hi := ts[int(float64(len(ts)-1)*0.001)], ts[len(ts)-1-int(float64(len(ts)-1)*0.001)]
		if from == analyze.NoTime {
			from, first = lo, ts[0]
		}
		from, first = min(from, lo), min(first, ts[0])
		to, last = max(to, hi), max(last, ts[len(ts)-1])
	}
	if from == analyze.NoTime {
		return 0, 0, 0, false
	}
	span := func(a, b int64) float64 { return float64(uint64(b) - uint64(a)) }
	if span(first, last) <= 10*span(from, to)+float64(time.Hour) {
		from, to = first, last // nothing far off: leave nothing out
	}
	for _, in := range incs {
		from, to = min(from, in.LostAt), max(to, in.LostAt)
		if in.FirstConnectAt != analyze.NoTime {
			to = max(to, in.FirstConnectAt)
		}
	}
	widest := uint64(analyze.BucketWidths[len(analyze.BucketWidths)-1])
	if uint64(to)-uint64(from) >= widest*(MaxBuckets-1) {
		from = to - int64(widest*(MaxBuckets-1))
	}
	for _, ts := range [][]int64{opens, act.Connects} {
		for _, t := range ts {
			if t < from || t > to {
				outside++
			}
		}
	}
	return from, to, outside, true
}

// incidentEnd is when incident i's chart ends: its last recovery (and at
// least a minute after its loss), before the next incident's loss, and
// not after the log's last activity.
func incidentEnd(incs []analyze.Incident, i int, last int64) int64 {
	in := &incs[i]
	end := in.LostAt + int64(time.Minute)
	if in.TTRMax > 0 && in.TTRMax < 365*24*time.Hour { // a clock years off is no recovery time to chart
		end = max(end, in.LastLoss+int64(in.TTRMax)+int64(5*time.Second))
	}
	if i+1 < len(incs) {
		end = min(end, incs[i+1].LostAt)
	}
	return max(in.LostAt+int64(time.Second), min(end, last))
}

func incidentOf(in *analyze.Incident, n int) incidentView {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	v := incidentView{N: n, LostAt: report.Time(in.LostAt)}
	v.How = fmt.Sprintf("%d devices lost the connection together (recorded disconnects)", in.DevicesLost)
	if in.LossInferred {
		v.How = fmt.Sprintf("%d devices lost the connection together (no disconnect recorded: inferred from the new attempts)", in.DevicesLost)
	}
	if in.Silent {
		noticed := "noticed one by one"
		if in.Aligned {
			noticed = "their keepalive phases aligned, noticed together"
		}
		v.How = fmt.Sprintf("%d devices lost the connection together in a silent outage, "+noticed+" from %s to %s; "+
			"the link died at %s, between %s and %s (from the %s), and times to recover are counted from then",
			in.DevicesLost, report.Time(in.FirstLoss), report.Time(in.LastLoss), report.Time(in.LostAt),
			report.Time(in.LostAtEarliest), report.Time(in.LostAtLatest), in.Basis)
	}
	if in.Broker != nil {
		v.Broker = report.BrokerView(in)
	}
	if in.Corrected > 0 {
		v.Clocks = fmt.Sprintf("%d of its devices' clocks were off; its times are corrected.", in.Corrected)
	}
	whyOf(&v, in)
	if in.FirstConnectAt == analyze.NoTime {
		v.Return = "none had connected again when the log ends"
		return v
	}
	v.Return = fmt.Sprintf("the first connected again %s later, at %s", ms(time.Duration(max(0, in.FirstConnectAt-in.LostAt))), report.Time(in.FirstConnectAt))
	v.Recovery = fmt.Sprintf("%d of %d recovered; time to recover p50 %s, p90 %s, p99 %s, max %s",
		in.Recovered, in.DevicesLost, ms(in.TTR50), ms(in.TTR90), ms(in.TTR99), ms(in.TTRMax)) + report.IncidentEstimateText(&in.TTR)
	if st := in.Storm; st != nil {
		src := "declared"
		if st.Inferred {
			src = "inferred"
		}
		v.Peak = fmt.Sprintf("recoveries peaked at %d in the 1 s from %s, where the %s policy's draws put at most %.1f in 1 s; ",
			st.Recoveries, report.Time(st.At), src, st.Expected)
	}
	if in.ConnectsPeakAt != analyze.NoTime {
		v.Peak += fmt.Sprintf("recorded connects (reconnects included) peaked at %d in the 1 s from %s", in.ConnectsPeak, report.Time(in.ConnectsPeakAt))
	}
	if in.FlushPeak > 0 {
		if v.Peak != "" {
			v.Peak += "; "
		}
		v.Peak += fmt.Sprintf("outbox flush at %d messages in 1 s at %s", in.FlushPeak, report.Time(in.FlushPeakAt))
	}
	if in.RedeliveryPeak > 0 {
		if v.Peak != "" {
			v.Peak += "; "
		}
		v.Peak += fmt.Sprintf("broker redelivery at %d messages in 1 s at %s", in.RedeliveryPeak, report.Time(in.RedeliveryPeakAt))
	}
	return v
}

// whyOf fills in what an incident's devices met and who never came back.
func whyOf(v *incidentView, in *analyze.Incident) {
	v.Why = report.DiagnosisText(in)
	for _, m := range in.Met {
		r := metRow{Stage: m.Stage.String(), Outcome: m.Outcome.String(), Records: m.Records, Devices: m.Devices}
		if m.Class != 0 {
			r.Class = m.Class.String()
		}
		if m.Reason >= 0 {
			r.Reason = fmt.Sprintf("%d (%s)", m.Reason, analyze.ReasonText(m.Reason))
		}
		v.Met = append(v.Met, r)
	}
	v.Service, v.Presence = report.ServiceText(in), report.PresenceText(in)
	v.PresenceLong, v.PresencePast = presenceRows(in)
	for k, c := range in.Cost {
		if c.Reporting > 0 {
			v.Cost = append(v.Cost, costRow{What: report.CostWhat(k), Field: analyze.CostField(k), Messages: c.Messages,
				Devices: c.Devices, Reporting: c.Reporting, Recorded: in.DevicesLost})
		}
	}
	for i := range in.Unserved {
		v.Unserved = append(v.Unserved, kv{in.Unserved[i].Device, report.UnservedText(in, &in.Unserved[i])})
	}
	for i := range in.Unrecovered {
		u := &in.Unrecovered[i]
		v.Unrecovered = append(v.Unrecovered, lostDevice{ID: u.Device, State: u.State, Text: report.LastStateText(u), TooSoon: u.CutShort})
		if u.CutShort {
			v.TooSoon++
		}
	}
}

// stripOf draws the strip chart of the worst devices that have timelines.
func stripOf(pg *page, rep *Report, o Options) error {
	var devs []*analyze.Device
	var from, to int64 = analyze.NoTime, analyze.NoTime
	for _, row := range pg.WorstDevices {
		dr := rep.Devices[row.ID]
		if dr == nil {
			continue
		}
		d := dr.Device
		devs = append(devs, d)
		for _, e := range d.Events {
			if from == analyze.NoTime || e.At < from {
				from = e.At
			}
			to = max(to, e.At)
		}
	}
	if len(devs) == 0 {
		return nil
	}
	var err error
	label := func(id string) string { return id }
	if o.Redact != nil {
		label = o.Redact.Text // before the label is cut: a cut value no longer matches
	}
	pg.Strip.SVG, err = stripChart(devs, from, max(to, from+1), label)
	pg.Strip.Key = stripKey()
	pg.Strip.Caption = "One row per device, the worst at the top: its sessions as bars, its socket-opens by outcome."
	return err
}

// timelineOf is device d as the page shows it: its findings, and its
// records in the span of its findings (or its first records), at most rows.
func timelineOf(dr *analyze.DeviceRecords, res *analyze.Result, anchor string, rows int, dir string) timelineView {
	d := dr.Device
	v := timelineView{ID: d.ID, Anchor: anchor}
	v.Summary = strings.Join([]string{nOf(len(d.Events), "record"), nOf(len(d.Attempts), "attempt"), nOf(len(d.Sessions), "session"), nOf(len(d.Episodes), "outage")}, ", ")
	var lo, hi int64 = analyze.NoTime, analyze.NoTime
	for k := range res.Findings {
		if f := &res.Findings[k]; f.Device == d.ID {
			if len(v.Findings) < maxListed {
				v.Findings = append(v.Findings, findingOf(f, res.Sources, nil))
			} else {
				v.MoreFindings++
			}
			if lo == analyze.NoTime || f.Start < lo {
				lo = f.Start
			}
			hi = max(hi, f.End)
		}
	}
	opens := report.SocketOpens(d)
	var pick []int
	for k := range d.Events {
		if lo == analyze.NoTime || (d.Events[k].At >= lo && d.Events[k].At <= hi) {
			pick = append(pick, k)
		}
	}
	if len(pick) == 0 { // findings about times no record has (a gap)
		for k := range d.Events {
			pick = append(pick, k)
		}
	}
	if lo != analyze.NoTime && len(pick) < len(d.Events) {
		v.Window = "the records from " + report.Time(lo) + " to " + report.Time(hi) + ", the span of its findings"
	}
	shown := pick[:min(rows, len(pick))]
	for _, k := range shown {
		e := &d.Events[k]
		v.Rows = append(v.Rows, eventRow{Time: report.Time(e.At), Outcome: e.Outcome.String(), Attempt: fmt.Sprint(e.Attempt),
			Delay: strconv.FormatFloat(e.Delay, 'f', -1, 64), Open: opens[k], Record: report.RefText(dr.Sources, e.Ref), Extras: report.EventExtras(e)})
	}
	if n := len(d.Events) - len(shown); n > 0 {
		where := "DATASET"
		if dir != "" {
			where = dir
		}
		v.More = fmt.Sprintf("%d more records: stormaudit timeline %s --device %s shows them all", n, shellQuote(where), shellQuote(d.ID))
	}
	v.MoreSessions = max(0, len(d.Sessions)-maxListed)
	for _, s := range d.Sessions[:min(len(d.Sessions), maxListed)] {
		if s.Down == analyze.NoTime {
			v.Sessions = append(v.Sessions, "up "+report.Time(s.Up)+", still up at the end")
		} else {
			v.Sessions = append(v.Sessions, fmt.Sprintf("up %s, down %s (%s)", report.Time(s.Up), report.Time(s.Down), report.Span(s.Up, s.Down)))
		}
	}
	v.MoreOutages = max(0, len(d.Episodes)-maxListed)
	for _, e := range d.Episodes[:min(len(d.Episodes), maxListed)] {
		kind := report.EpisodeKind(&e)
		if e.End == analyze.NoTime {
			v.Outages = append(v.Outages, fmt.Sprintf("%s from %s, not recovered; %d attempts", kind, report.Time(e.Start), e.Attempts))
		} else {
			v.Outages = append(v.Outages, fmt.Sprintf("%s from %s to %s (%s); %d attempts", kind, report.Time(e.Start), report.Time(e.End),
				report.Span(e.Start, e.End), e.Attempts))
		}
	}
	return v
}

// shellQuote quotes s for a POSIX shell: a client id pasted into a
// command is one word, and nothing in it expands.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// nOf says n things, in the singular for one.
func nOf(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// maxPresenceRows is how many devices the report lists of an incident's
// presence: those shown online longest.
const maxPresenceRows = 20

// presenceRows lists the devices of an incident shown online longest
// while down, and counts those past the limit.
func presenceRows(in *analyze.Incident) ([]kv, int) {
	if in.Broker == nil || in.Broker.Presence == nil {
		return nil, 0
	}
	p := in.Broker.Presence
	ws := slices.Clone(p.Windows)
	slices.SortStableFunc(ws, func(a, b analyze.PresenceWindow) int { return cmp.Compare(b.Until, a.Until) })
	past := 0
	for _, w := range ws {
		if time.Duration(w.Until-p.From) > p.Limit {
			past++
		}
	}
	var rows []kv
	for _, w := range ws[:min(len(ws), maxPresenceRows)] {
		rows = append(rows, kv{w.Device, fmt.Sprintf("%v (%s)", time.Duration(w.Until-p.From).Round(time.Millisecond), w.How)})
	}
	return rows, past
}
