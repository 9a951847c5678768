package afteraction

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"regexp"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The colours of the charts: a socket-open's outcome, connects, the
// budget, the incidents and the broker's accepts.
var (
	colConnected = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff}
	colRefused   = color.RGBA{R: 0xef, G: 0x6c, B: 0x00, A: 0xff}
	colFailed    = color.RGBA{R: 0xc6, G: 0x28, B: 0x28, A: 0xff}
	colPending   = color.RGBA{R: 0x9e, G: 0x9e, B: 0x9e, A: 0xff}
	colConnects  = color.RGBA{R: 0x15, G: 0x65, B: 0xc0, A: 0xff}
	colBudget    = color.RGBA{A: 0xff}
	colIncident  = color.RGBA{R: 0x6a, G: 0x1b, B: 0x9a, A: 0xff}
	colInfo      = color.RGBA{R: 0x54, G: 0x6e, B: 0x7a, A: 0xff}
	colAccepts   = color.RGBA{R: 0x00, G: 0x83, B: 0x8f, A: 0xff}
)

// sans is the charts' typeface: Liberation Sans, metric-compatible with
// Arial, which the SVG names as a fallback.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot with the report's typeface and a title.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	for _, s := range []*plot.Axis{&p.X, &p.Y} {
		s.Label.TextStyle.Font = withSize(sans, s.Label.TextStyle.Font.Size)
		s.Tick.Label.Font = withSize(sans, s.Tick.Label.Font.Size)
		s.Tick.Marker = plainTicks{}
	}
	p.Title.TextStyle.Font = withSize(sans, 12)
	p.Legend.TextStyle.Font = withSize(sans, p.Legend.TextStyle.Font.Size)
	p.Title.Text = title
	return p
}

// plainTicks are gonum's default ticks without the trailing zeros its
// common precision writes: 2500, not 2500.00; 0.5, not 0.50.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if l := ticks[i].Label; strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") {
			ticks[i].Label = strings.TrimSuffix(strings.TrimRight(l, "0"), ".")
		}
	}
	return ticks
}

func withSize(f font.Font, size font.Length) font.Font {
	f.Size = size
	return f
}

// svgHeader matches what vgsvg writes before the <svg> element and that
// element's fixed size in points.
var (
	svgProlog = regexp.MustCompile(`(?s)\A.*?<svg width="([0-9.e+]+)pt" height="([0-9.e+]+)pt"`)
)

// render draws p on a w×h point canvas and returns it as an inline SVG
// element that scales to the page's width, labelled for screen readers.
// The text in it is escaped by vgsvg (html.EscapeString), so device ids
// on an axis cannot become markup.
func render(p *plot.Plot, w, h vg.Length, label string) (template.HTML, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(false))
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	m := svgProlog.FindStringSubmatchIndex(s)
	if m == nil {
		return "", fmt.Errorf("vgsvg wrote no <svg> element of a known size")
	}
	s = `<svg class="chart" role="img" aria-label="` + template.HTMLEscapeString(label) + `" width="100%" style="max-width:` +
		s[m[2]:m[3]] + `pt"` + s[m[1]:]
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return template.HTML(s), nil // vgsvg escapes every text it writes
}

// timeAxis makes p's x axis show UTC clock times of Unix seconds, with
// seconds, or milliseconds when the span is under a minute.
func timeAxis(p *plot.Plot, span time.Duration) {
	format := "15:04:05"
	switch {
	case span < time.Minute:
		format = "15:04:05.000"
	case span > 60*24*time.Hour:
		format = "2006-01-02"
	case span > 48*time.Hour:
		format = "2006-01-02 15:04"
	}
	p.X.Tick.Marker = plot.TimeTicks{Format: format, Time: func(t float64) time.Time {
		return time.Unix(0, int64(t*1e9)).UTC()
	}}
	p.X.Label.Text = "time (UTC)"
}

// secs converts Unix ns to Unix seconds, the charts' x unit.
func secs(t int64) float64 { return float64(t) / 1e9 }
