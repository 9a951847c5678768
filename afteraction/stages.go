package afteraction

import (
	"image/color"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
)

// stageDashes are the dashes of each stage's lines in a stages chart:
// the session solid, the address stage dashed, the link dotted.
var stageDashes = map[auditfmt.Stage][]vg.Length{
	auditfmt.StageSession: nil,
	auditfmt.StageAddress: {vg.Points(4), vg.Points(3)},
	auditfmt.StageLink:    {vg.Points(1), vg.Points(2)},
}

var stageMarks = map[auditfmt.Stage]string{auditfmt.StageSession: "line", auditfmt.StageAddress: "dash", auditfmt.StageLink: "dot"}

// The three lines a stage has in a stages chart, and their colours.
var (
	stageSeries = [3]string{"attempts", "successes", "failures"}
	stageColors = [3]color.Color{colConnects, colConnected, colFailed}
)

// stagesChart draws what the devices met through an incident, stage by
// stage: per bucket of [from, to], each stage's attempts (socket-opens),
// successes (the attempts that connected) and failures (refused, failed,
// given up), a line each, coloured by series and dashed by stage. The
// stages are those the opens have in the window; an empty view when none.
func stagesChart(title string, opens []analyze.Open, from, to int64) (chartView, error) {
	width := analyze.BucketWidth(from, to, time.Second, MaxBuckets)
	origin := floorDiv(from, int64(width)) * int64(width)
	n := int(min(uint64(MaxBuckets), (uint64(max(to, origin))-uint64(origin))/uint64(width)+1))
	type counts [3][]float64 // attempts, successes, failures per bucket
	by := map[auditfmt.Stage]*counts{}
	for _, o := range opens {
		k := floorDiv(o.At-origin, int64(width))
		if o.At < from || o.At > to || k < 0 || k >= int64(n) {
			continue
		}
		c := by[o.Stage]
		if c == nil {
			c = &counts{make([]float64, n), make([]float64, n), make([]float64, n)}
			by[o.Stage] = c
		}
		c[0][k]++
		switch o.Kind {
		case analyze.OpenConnected:
			c[1][k]++
		case analyze.OpenRefused, analyze.OpenFailed:
			c[2][k]++
		}
	}
	if len(by) == 0 {
		return chartView{}, nil
	}
	p := newPlot(title)
	timeAxis(p, time.Duration(n)*width)
	p.Y.Label.Text = "per " + widthText(width)
	p.Y.Min = 0
	var key []keyItem
	for _, st := range []auditfmt.Stage{auditfmt.StageLink, auditfmt.StageAddress, auditfmt.StageSession} {
		c := by[st]
		if c == nil {
			continue
		}
		for s, series := range c {
			xys := make(plotter.XYs, 0, n+1)
			for k, y := range series {
				xys = append(xys, plotter.XY{X: secs(origin + int64(k)*int64(width)), Y: y})
			}
			xys = append(xys, plotter.XY{X: secs(origin + int64(n)*int64(width)), Y: xys[len(xys)-1].Y})
			p.Add(&plotter.Line{XYs: xys, StepStyle: plotter.PostStep, LineStyle: draw.LineStyle{Color: stageColors[s],
				Width: vg.Points(1.2), Dashes: stageDashes[st]}})
			key = append(key, keyItem{Name: st.String() + ": " + stageSeries[s], Color: hex(stageColors[s]), Mark: stageMarks[st]})
		}
	}
	svg, err := render(p, 16*vg.Inch/2, 3*vg.Inch, title)
	if err != nil {
		return chartView{}, err
	}
	return chartView{SVG: svg, Key: key, Caption: "What the devices met, stage by stage, per " + widthText(width) +
		": attempts (socket-opens), successes (attempts that connected) and failures (refused, failed or given up); " +
		"the session solid, the address stage dashed, the link dotted."}, nil
}
