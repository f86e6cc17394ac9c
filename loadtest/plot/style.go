package plot

import (
	"errors"
	"fmt"
	"image/color"
	"os"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The size of every chart: 800x500 px at 96 dpi (vg lengths are points,
// 1/72 inch).
const (
	widthPx  = 800
	heightPx = 500
	dpi      = 96
)

// palette is Okabe and Ito's colour-blind-safe set, without its yellow,
// which is unreadable on white.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
}

var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{},
	draw.BoxGlyph{},
	draw.PyramidGlyph{},
	draw.CrossGlyph{},
	draw.RingGlyph{},
	draw.SquareGlyph{},
	draw.PlusGlyph{},
}

var dashes = [][]vg.Length{
	nil,
	{vg.Points(7), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)},
}

// seriesStyle returns the colour, marker and dash pattern of series i.
func seriesStyle(i int) (color.RGBA, draw.GlyphDrawer, []vg.Length) {
	return palette[i%len(palette)], shapes[i%len(shapes)], dashes[i%len(dashes)]
}

// newPlot returns a plot with the common title, labels, grid and legend
// settings.
func newPlot(title, xLabel, yLabel string) *gonum.Plot {
	p := gonum.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	// Sans rather than gonum's default serif: easier to read small. Set
	// per plot: gonum's DefaultFont is a process-wide variable.
	for _, f := range []struct {
		font *font.Font
		size float64
	}{
		{&p.Title.TextStyle.Font, 14},
		{&p.X.Label.TextStyle.Font, 11},
		{&p.Y.Label.TextStyle.Font, 11},
		{&p.X.Tick.Label.Font, 10},
		{&p.Y.Tick.Label.Font, 10},
		{&p.Legend.TextStyle.Font, 11},
	} {
		f.font.Variant = "Sans"
		f.font.Size = vg.Points(f.size)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(6)
	p.Legend.ThumbnailWidth = vg.Points(30)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xDD}
	g.Horizontal.Color = color.Gray{Y: 0xDD}
	p.Add(g)
	return p
}

// addSeries adds one line with markers in the style of series i.
func addSeries(p *gonum.Plot, i int, name string, xys plotter.XYs, markers bool) error {
	c, shape, dash := seriesStyle(i)
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plot: series %q: %w", name, err)
	}
	line.Color = c
	line.Width = vg.Points(2)
	line.Dashes = dash
	points.Color = c
	points.Shape = shape
	points.Radius = vg.Points(4)
	if markers {
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	} else {
		p.Add(line)
		p.Legend.Add(name, line)
	}
	return nil
}

// writePNG renders p at the package's size into path. A failed write
// leaves no file.
func writePNG(p *gonum.Plot, path string) (err error) {
	c := vgimg.NewWith(
		vgimg.UseWH(vg.Length(widthPx)*vg.Inch/dpi, vg.Length(heightPx)*vg.Inch/dpi),
		vgimg.UseDPI(dpi),
	)
	p.Draw(draw.New(c))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	_, werr := vgimg.PngCanvas{Canvas: c}.WriteTo(f)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("plot: write %s: %w", path, err)
	}
	return nil
}
