package afteraction

import (
	"fmt"
	"html/template"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stormaudit/stormaudit/analyze"
)

// MaxBuckets is the most bars an activity chart draws: its buckets are
// the narrowest of analyze.BucketWidths, at least a second, that cover
// its span in this many.
const MaxBuckets = 600

// kindColors are the colours of the kinds of socket-open, by
// analyze.OpenKind.
var kindColors = [analyze.NumOpenKinds]color.Color{colConnected, colRefused, colFailed, colPending}

// activity is what an activity chart shows: the fleet's socket-opens by
// outcome and its connects in [from, to], the budget, and the incidents.
type activity struct {
	title      string
	act        *analyze.Activity
	from, to   int64
	budgetPerS float64 // connects per second the broker accepts; 0 when undeclared
	incidents  []analyze.Incident
	numbers    []int                    // the incidents' numbers in the report
	accepts    func(from, to int64) int // the broker's accepts in [from, to), from its log; nil without one
}

// activityChart draws the socket-opens per bucket as stacked areas, one
// per outcome, the connects as a line, the budget as a dashed line, and
// each incident's loss (and the broker's return) as vertical lines.
func activityChart(a activity) (template.HTML, time.Duration, error) {
	width := analyze.BucketWidth(a.from, a.to, time.Second, MaxBuckets)
	origin := floorDiv(a.from, int64(width)) * int64(width)
	n := MaxBuckets // when even the widest bucket does not cover the span
	if span := uint64(max(a.to, origin)) - uint64(origin); span/uint64(width) < MaxBuckets {
		n = int(span/uint64(width)) + 1
	}
	hist := a.act.Histogram(origin, width, n)
	p := newPlot(a.title)
	timeAxis(p, time.Duration(n)*width)
	p.Y.Label.Text = "per " + widthText(width)
	p.Y.Min = 0
	end := secs(origin + int64(n)*int64(width))
	// stacked: the area of kind k reaches the sum of kinds 0..k, drawn
	// from the top down so that each covers the one above it
	for k := int(analyze.NumOpenKinds) - 1; k >= 0; k-- {
		xys := make(plotter.XYs, 0, n+1)
		for _, b := range hist {
			sum := 0
			for j := 0; j <= k; j++ {
				sum += b.Opens[j]
			}
			xys = append(xys, plotter.XY{X: secs(b.Start), Y: float64(sum)})
		}
		xys = append(xys, plotter.XY{X: end, Y: xys[len(xys)-1].Y})
		l := &plotter.Line{XYs: xys, StepStyle: plotter.PostStep, FillColor: kindColors[k]}
		p.Add(l)
	}
	conn := make(plotter.XYs, 0, n+1)
	for _, b := range hist {
		conn = append(conn, plotter.XY{X: secs(b.Start), Y: float64(b.Connects)})
	}
	conn = append(conn, plotter.XY{X: end, Y: conn[len(conn)-1].Y})
	cl := &plotter.Line{XYs: conn, StepStyle: plotter.PostStep, LineStyle: draw.LineStyle{Color: colConnects, Width: vg.Points(1.2)}}
	p.Add(cl)
	top := a.budgetPerS * width.Seconds()
	if a.accepts != nil {
		acc := make(plotter.XYs, 0, n+1)
		for _, b := range hist {
			n := float64(a.accepts(b.Start, b.Start+int64(width)))
			acc = append(acc, plotter.XY{X: secs(b.Start), Y: n})
			top = max(top, n)
		}
		acc = append(acc, plotter.XY{X: end, Y: acc[len(acc)-1].Y})
		p.Add(&plotter.Line{XYs: acc, StepStyle: plotter.PostStep,
			LineStyle: draw.LineStyle{Color: colAccepts, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}})
	}
	if a.budgetPerS > 0 {
		y := a.budgetPerS * width.Seconds()
		bl := &plotter.Line{XYs: plotter.XYs{{X: secs(origin), Y: y}, {X: end, Y: y}},
			LineStyle: draw.LineStyle{Color: colBudget, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
		p.Add(bl)
	}
	for _, b := range hist {
		top = max(top, float64(b.Total()), float64(b.Connects))
	}
	if err := markIncidents(p, a, origin, end, max(top, 1)); err != nil {
		return "", 0, err
	}
	svg, err := render(p, 16*vg.Inch/2, 4*vg.Inch, a.title)
	return svg, width, err
}

// markIncidents draws each incident's loss as a solid vertical line and
// the broker's return as a dotted one, labelled with the incident's number.
func markIncidents(p *plot.Plot, a activity, origin int64, end, top float64) error {
	if len(a.incidents) == 0 {
		return nil
	}
	var labels plotter.XYLabels
	for i, in := range a.incidents[:min(len(a.incidents), maxListed)] {
		for _, at := range []int64{in.LostAt, in.FirstConnectAt} {
			if at == analyze.NoTime || secs(at) < secs(origin) || secs(at) > end {
				continue
			}
			sty := draw.LineStyle{Color: colIncident, Width: vg.Points(1)}
			if at != in.LostAt {
				sty.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
			}
			p.Add(&plotter.Line{XYs: plotter.XYs{{X: secs(at), Y: 0}, {X: secs(at), Y: top}}, LineStyle: sty})
		}
		if secs(in.LostAt) >= secs(origin) && secs(in.LostAt) <= end {
			labels.XYs = append(labels.XYs, plotter.XY{X: secs(in.LostAt), Y: top})
			labels.Labels = append(labels.Labels, fmt.Sprintf(" incident %d", a.numbers[i]))
		}
	}
	if len(labels.XYs) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Color = colIncident
		l.TextStyle[i].Font = withSize(sans, 9)
		l.TextStyle[i].YAlign = -1 // below the top
	}
	p.Add(l)
	return nil
}

// widthText names a bucket width: "second" for 1s, else the duration.
func widthText(w time.Duration) string {
	if w == time.Second {
		return "second"
	}
	return w.String()
}

// maxCDFPoints bounds the points of a CDF's line.
const maxCDFPoints = 400

// cdfSeries is one line of a CDF chart: the times to recover of the
// losses a connect ended, out of all the losses.
type cdfSeries struct {
	name   string
	n      int                       // the times to recover
	at     func(k int) time.Duration // the k-th shortest
	losses int                       // all the losses, recovered or not: the denominator
}

// ttrChart draws the distribution of times to recover as CDFs: the
// fleet's, and each incident's.
func ttrChart(series []cdfSeries) (template.HTML, []keyItem, error) {
	p := newPlot("Time to recover (CDF)")
	p.X.Label.Text = "time to recover (s)"
	p.Y.Label.Text = "share of the losses recovered"
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Min = 0
	palette := []color.Color{colConnects, colIncident, colRefused, colConnected, colFailed, colInfo}
	var key []keyItem
	for i, s := range series {
		if s.n == 0 {
			continue
		}
		xys := cdfPoints(s)
		// PostStep: the share reaches k/all at the k-th time, not before
		c := palette[i%len(palette)]
		p.Add(&plotter.Line{XYs: xys, StepStyle: plotter.PostStep, LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5)}})
		key = append(key, keyItem{Name: s.name, Color: hex(c), Mark: "line"})
	}
	p.Add(plotter.NewGrid())
	svg, err := render(p, 8*vg.Inch, 4*vg.Inch, "time to recover, cumulative distribution")
	return svg, key, err
}

// cdfPoints returns the corners of s's CDF, drawn as post-steps: the
// share of all its losses recovered within each time, from (0, 0), thinned
// to at most maxCDFPoints steps and always ending at the last time.
func cdfPoints(s cdfSeries) plotter.XYs {
	n, all := s.n, float64(max(s.losses, s.n))
	xys := make(plotter.XYs, 0, min(n, maxCDFPoints)+2)
	xys = append(xys, plotter.XY{X: 0, Y: 0})
	step := max(1, n/maxCDFPoints)
	for k := step - 1; k < n; k += step {
		xys = append(xys, plotter.XY{X: s.at(k).Seconds(), Y: float64(k+1) / all})
	}
	if xys[len(xys)-1].Y < float64(n)/all {
		xys = append(xys, plotter.XY{X: s.at(n - 1).Seconds(), Y: float64(n) / all})
	}
	return xys
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// keyItem is one entry of a chart's key, which the page draws in HTML
// under the chart (a legend inside it would hide bars).
type keyItem struct {
	Name, Color, Mark string // Mark: "area", "line", "dash", "dot" or "glyph"
	Glyph             string // the glyph's shape, for a glyph
}

// hex returns c as a CSS colour.
func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// activityKey is the key of an activity chart.
func activityKey(budget, accepts bool) []keyItem {
	var key []keyItem
	for k := range analyze.NumOpenKinds {
		key = append(key, keyItem{Name: "socket-opens: " + k.String(), Color: hex(kindColors[k]), Mark: "area"})
	}
	key = append(key, keyItem{Name: "connects", Color: hex(colConnects), Mark: "line"})
	if accepts {
		key = append(key, keyItem{Name: "the broker's accepts (its log)", Color: hex(colAccepts), Mark: "dot"})
	}
	if budget {
		key = append(key, keyItem{Name: "the connect budget", Color: hex(colBudget), Mark: "dash"})
	}
	return append(key, keyItem{Name: "incident: loss", Color: hex(colIncident), Mark: "line"},
		keyItem{Name: "incident: the broker's return", Color: hex(colIncident), Mark: "dot"})
}

// stripKey is the key of the strip chart.
func stripKey() []keyItem {
	key := []keyItem{{Name: "session (connected)", Color: hex(colConnected), Mark: "line"}}
	shapes := [analyze.NumOpenKinds]string{"●", "▲", "✕", "○"} // as stripChart draws them
	for k := range analyze.NumOpenKinds {
		key = append(key, keyItem{"socket-open: " + k.String(), hex(kindColors[k]), "glyph", shapes[k]})
	}
	return key
}
