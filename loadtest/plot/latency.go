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

// Percentile is one latency percentile: Q is the quantile (0.5, 0.9, 0.99,
// 0.999, or 1 for the maximum).
type Percentile struct {
	Q     float64
	Value time.Duration
}

// LatencySeries is one runtime's percentiles, e.g. Name "lmigo" or
// "aws-lambda-go". Points may come in any order.
type LatencySeries struct {
	Name   string
	Points []Percentile
}

// floorMS is where latencies of zero or less are drawn: a log axis has no
// zero.
const floorMS = 0.001

// LatencyPNG writes a chart of latency percentiles to path: the quantiles
// of all series at equal steps on x ("p50 p90 p99 p99.9 max"), latency in
// milliseconds on a log y axis, one line with markers per series.
func LatencyPNG(path, title string, series []LatencySeries) error {
	qs := quantiles(series)
	if len(qs) == 0 {
		return ErrEmpty
	}
	p := newPlot(title, "percentile", "latency (ms, log scale)")
	p.Y.Scale = gonum.LogScale{}

	ticks := make(gonum.ConstantTicks, len(qs))
	for i, q := range qs {
		ticks[i] = gonum.Tick{Value: float64(i), Label: quantileLabel(q)}
	}
	p.X.Tick.Marker = ticks

	lo, hi := math.Inf(1), math.Inf(-1)
	drawn := 0
	for _, s := range series {
		if len(s.Points) > 0 {
			drawn++
		}
	}
	k := 0
	for _, s := range series {
		if len(s.Points) == 0 {
			continue
		}
		pts := slices.Clone(s.Points)
		slices.SortFunc(pts, func(a, b Percentile) int { return cmp.Compare(a.Q, b.Q) })
		// Nudge series apart sideways so that equal values stay visible.
		nudge := 0.06 * (float64(k) - float64(drawn-1)/2)
		xys := make(plotter.XYs, len(pts))
		for j, pt := range pts {
			ms := max(float64(pt.Value)/float64(time.Millisecond), floorMS)
			xys[j].X = float64(slices.Index(qs, pt.Q)) + nudge
			xys[j].Y = ms
			lo, hi = min(lo, ms), max(hi, ms)
		}
		if err := addSeries(p, k, s.Name, xys, true); err != nil {
			return err
		}
		k++
	}

	p.X.Min, p.X.Max = -0.4, float64(len(qs)-1)+0.4
	// Room below the lowest point, and above the highest for the legend.
	p.Y.Min = lo / 1.6
	p.Y.Max = hi * 4
	p.Y.Tick.Marker = logTicks{}
	return writePNG(p, path)
}

// quantiles returns the distinct quantiles of all series, ascending.
func quantiles(series []LatencySeries) []float64 {
	var qs []float64
	for _, s := range series {
		for _, pt := range s.Points {
			qs = append(qs, pt.Q)
		}
	}
	slices.Sort(qs)
	return slices.Compact(qs)
}

// quantileLabel names a quantile: 1 is "max", 0.999 is "p99.9".
func quantileLabel(q float64) string {
	if q >= 1 {
		return "max"
	}
	pct := math.Round(q*100*1e4) / 1e4 // 0.999*100 is not exactly 99.9
	return "p" + strconv.FormatFloat(pct, 'f', -1, 64)
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten, with
// unlabelled minor ticks between them, so that even a range shorter than a
// decade gets several labels.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []gonum.Tick {
	var ticks []gonum.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := base * float64(m)
			if v < lo || v > hi {
				continue
			}
			t := gonum.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
