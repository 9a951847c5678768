package afteraction

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stormaudit/stormaudit/replay"
)

// colRedelivered is the colour of the redelivery wave.
var colRedelivered = colRefused

// wavesChart draws a replay's connect wave and its redelivery wave (the
// queued messages the devices received) per second of the replay, on one
// time axis; none without a queue.
func wavesChart(r *replay.Report) (chartView, error) {
	if r.Waves == nil || len(r.Waves.Connects) == 0 {
		return chartView{}, nil
	}
	p := newPlot("Connects and redelivery: " + r.Plan)
	p.X.Label.Text = "seconds from the replay's start"
	p.Y.Label.Text = "per second"
	p.X.Min, p.Y.Min = 0, 0
	for _, s := range []struct {
		n []int
		c color.Color
	}{{r.Waves.Redelivered, colRedelivered}, {r.Waves.Connects, colConnects}} {
		xys := make(plotter.XYs, 0, len(s.n)+1)
		for i, n := range s.n {
			xys = append(xys, plotter.XY{X: float64(i), Y: float64(n)})
		}
		xys = append(xys, plotter.XY{X: float64(len(s.n)), Y: xys[len(xys)-1].Y})
		p.Add(&plotter.Line{XYs: xys, StepStyle: plotter.PostStep, LineStyle: draw.LineStyle{Color: s.c, Width: vg.Points(1.2)}})
	}
	p.Add(plotter.NewGrid())
	svg, err := render(p, 8*vg.Inch, 3*vg.Inch, fmt.Sprintf("%s: connects accepted and queued messages received per second", r.Plan))
	key := []keyItem{{Name: "connects accepted", Color: hex(colConnects), Mark: "line"},
		{Name: "queued messages received (redelivery)", Color: hex(colRedelivered), Mark: "line"}}
	return chartView{SVG: svg, Caption: fmt.Sprintf("peak %d connects/s at +%.0f s; redelivery peak %d/s at +%.0f s",
		r.PeakConnectsPerS, r.PeakAtS, r.RedeliveryPeakPerS, r.RedeliveryPeakAtS), Key: key}, err
}
