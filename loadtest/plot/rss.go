package plot

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// RSSPoint is one sample of resident memory: T since the start of the run.
type RSSPoint struct {
	T     time.Duration
	Bytes int64
}

// RSSSeries is one runtime's samples, in any order.
type RSSSeries struct {
	Name   string
	Points []RSSPoint
}

// markerLimit is the most samples a series may have and still get
// markers: beyond it they would merge into a smear.
const markerLimit = 40

// RSSPNG writes a chart of resident memory over time to path: seconds on
// x, MiB on y (from zero), one line per series.
func RSSPNG(path, title string, series []RSSSeries) error {
	p := newPlot(title, "time (s)", "RSS (MiB)")
	var hi float64
	k := 0
	for _, s := range series {
		if len(s.Points) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xys[j].X = pt.T.Seconds()
			xys[j].Y = float64(pt.Bytes) / (1 << 20)
			hi = max(hi, xys[j].Y)
		}
		// Sorted by time, so that the line does not double back.
		slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		if err := addSeries(p, k, s.Name, xys, len(xys) <= markerLimit); err != nil {
			return err
		}
		k++
	}
	if k == 0 {
		return ErrEmpty
	}
	p.X.Min = 0
	p.Y.Min = 0
	// Headroom above the highest sample for the legend.
	p.Y.Max = max(hi*1.3, 1)
	p.Y.Tick.Marker = linearTicks{}
	p.X.Tick.Marker = linearTicks{}
	return writePNG(p, path)
}

// linearTicks labels about six round values (1, 2 or 5 times a power of
// ten apart) with plain numbers, and puts an unlabelled tick between them.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []gonum.Tick {
	if !(hi > lo) {
		return []gonum.Tick{{Value: lo, Label: formatTick(lo)}}
	}
	step := niceStep((hi - lo) / 6)
	var ticks []gonum.Tick
	for i := math.Ceil(lo/step*2) / 2; i*step <= hi; i += 0.5 {
		v := i * step
		t := gonum.Tick{Value: v}
		if i == math.Trunc(i) {
			t.Label = formatTick(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that is
// at least raw.
func niceStep(raw float64) float64 {
	base := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*base >= raw {
			return m * base
		}
	}
	return 10 * base
}

func formatTick(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}
