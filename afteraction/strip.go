package afteraction

import (
	"github.com/stormaudit/stormaudit/internal/safe"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stormaudit/stormaudit/analyze"
)

// stripColumns is how many columns a strip chart's time axis is cut
// into: a device's socket-opens of one kind in one column are drawn as
// one glyph, and its sessions closer than a column are joined, so that a
// device that hot-looped for an hour costs as much as one that did not.
// When the chart would have more than stripGlyphs glyphs, it halves its
// columns (to minColumns at least): a row of flapping devices costs a
// bounded share of the page.
const (
	stripColumns = 300
	minColumns   = 40
	stripGlyphs  = 4000
)

// maxLabel is the longest device id a strip chart's axis shows in full.
const maxLabel = 32

// stripChart draws one row per device, the first at the top: its
// sessions (connected intervals) as a bar, and its socket-opens as glyphs
// by outcome.
//
// label names each device on the axis (before it is cut to maxLabel).
func stripChart(devs []*analyze.Device, from, to int64, label func(string) string) (template.HTML, error) {
	if len(devs) == 0 {
		return "", nil
	}
	p := newPlot("The worst devices: sessions and socket-opens")
	timeAxis(p, durationOf(from, to))
	names := make([]string, len(devs))
	span := float64(uint64(max(to, from+1)) - uint64(from)) // exact: the int64 difference can overflow
	cols := stripColumns
	glyphs := thinOpens(devs, from, span/float64(cols))
	for count(glyphs) > stripGlyphs && cols > minColumns {
		cols = max(cols/2, minColumns)
		glyphs = thinOpens(devs, from, span/float64(cols))
	}
	col := span / float64(cols)
	var bars segments
	bars.style = draw.LineStyle{Color: colConnected, Width: vg.Points(3)}
	for i, d := range devs {
		names[len(devs)-1-i] = shortID(label(d.ID))
		bars.add(float64(len(devs)-1-i), d.Sessions, from, to, col)
	}
	p.Add(&bars)
	shapes := [analyze.NumOpenKinds]draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}}
	for k := range glyphs {
		if len(glyphs[k]) == 0 {
			continue
		}
		s, err := plotter.NewScatter(glyphs[k])
		if err != nil {
			return "", err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: kindColors[k], Radius: vg.Points(2.5), Shape: shapes[k]}
		p.Add(s)
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = secs(from), secs(to)
	p.Y.Min, p.Y.Max = -0.5, float64(len(devs))-0.5 // every row, glyphs or not
	h := vg.Points(float64(60 + 14*len(devs)))
	return render(p, 8*vg.Inch, h, "the worst devices' sessions and socket-opens over time")
}

// thinOpens returns the devices' socket-opens by kind, device i on row
// len(devs)-1-i, one of each kind in each column col ns wide from from.
func thinOpens(devs []*analyze.Device, from int64, col float64) [analyze.NumOpenKinds]plotter.XYs {
	var glyphs [analyze.NumOpenKinds]plotter.XYs
	for i, d := range devs {
		y := float64(len(devs) - 1 - i)
		seen := map[[2]int64]bool{}
		for _, o := range d.Opens() {
			c := [2]int64{int64(o.Kind), int64(math.Floor(float64(uint64(o.At)-uint64(from)) / col))}
			if !seen[c] {
				seen[c] = true
				glyphs[o.Kind] = append(glyphs[o.Kind], plotter.XY{X: secs(o.At), Y: y})
			}
		}
	}
	return glyphs
}

func count(glyphs [analyze.NumOpenKinds]plotter.XYs) int {
	n := 0
	for _, g := range glyphs {
		n += len(g)
	}
	return n
}

// shortID returns id, cut to maxLabel runes.
func shortID(id string) string {
	id = safe.Text(id) // a control or bidi character shown, not obeyed
	if r := []rune(id); len(r) > maxLabel {
		return string(r[:maxLabel-1]) + "…"
	}
	return id
}

// segments is a plotter of horizontal bars: a device's sessions.
type segments struct {
	style draw.LineStyle
	segs  [][3]float64 // y, x0, x1
}

// add adds the sessions of the device on row y, clipped to [from, to],
// joining those less than col ns apart.
func (s *segments) add(y float64, sessions []analyze.Session, from, to int64, col float64) {
	first := len(s.segs)
	for _, ss := range sessions {
		up, down := max(ss.Up, from), ss.Down
		if down == analyze.NoTime || down > to {
			down = to
		}
		if down < up {
			continue
		}
		if n := len(s.segs); n > first && float64(up)-s.segs[n-1][2]*1e9 < col {
			s.segs[n-1][2] = secs(down)
			continue
		}
		s.segs = append(s.segs, [3]float64{y, secs(up), secs(down)})
	}
}

// Plot implements plot.Plotter.
func (s *segments) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, g := range s.segs {
		x0, x1 := trX(g[1]), trX(g[2])
		if x1-x0 < vg.Points(1) {
			x1 = x0 + vg.Points(1)
		}
		c.StrokeLine2(s.style, x0, trY(g[0]), x1, trY(g[0]))
	}
}

// Thumbnail implements plot.Thumbnailer, for the legend.
func (s *segments) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(s.style, c.Min.X, y, c.Max.X, y)
}

// rulesChart draws the findings per rule as horizontal bars coloured by
// the rule's severity.
func rulesChart(rules []ruleView) (template.HTML, error) {
	var shown []ruleView
	for _, r := range rules {
		if r.Count > 0 {
			shown = append(shown, r)
		}
	}
	if len(shown) == 0 {
		return "", nil // no finding: the page says so
	}
	slices.Reverse(shown) // NominalY counts from the bottom
	p := newPlot("Findings per rule")
	p.X.Label.Text = "findings"
	p.X.Min = 0
	names := make([]string, len(shown))
	for i, r := range shown {
		names[i] = r.ID
	}
	sevColor := map[string]color.Color{"error": colFailed, "warning": colRefused, "info": colInfo}
	for _, sev := range []string{"error", "warning", "info"} {
		vals := make(plotter.Values, len(shown))
		any := false
		for i, r := range shown {
			if strings.EqualFold(r.Severity, sev) {
				vals[i], any = float64(r.Count), true
			}
		}
		if !any {
			continue
		}
		b, err := plotter.NewBarChart(vals, vg.Points(10))
		if err != nil {
			return "", err
		}
		b.Horizontal, b.Color, b.LineStyle.Width = true, sevColor[sev], 0
		p.Add(b)
		p.Legend.Add(sev, b)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(-20)
	p.NominalY(names...)
	h := vg.Points(float64(70 + 16*max(len(shown), 1)))
	return render(p, 8*vg.Inch, h, "findings per rule")
}
