// Package plot draws the load test's PNG charts with gonum.org/v1/plot:
// latency percentiles per runtime (LatencyPNG) and resident memory over a
// run (RSSPNG).
//
//	err := plot.LatencyPNG("latency.png", "tiny invocations, N=8", []plot.LatencySeries{
//		{Name: "lmigo", Points: lmigo},
//		{Name: "aws-lambda-go", Points: awsLambdaGo},
//	})
//
// # Contract
//
// Each function writes one 800x500 PNG to path (created or truncated) and
// returns when the file is closed; on error no partial file is left. It
// only reads its arguments. The charts are made to be read at a glance:
// a title, axis labels with units, a grid, a legend, and per series a
// colour from a colour-blind-safe palette, a marker shape and a dash
// pattern of its own, so that series stay apart even in grey.
//
// A series without points is left out (and from the legend); when no
// series has a point the function returns ErrEmpty and writes nothing.
//
// # Why the latency chart looks the way it does
//
// Tail latencies span orders of magnitude (a p50 of 100 µs beside a max of
// 50 ms), so latency is on a log axis, where bars would mislead: each
// runtime is a line with markers over the percentiles, which sit at equal
// steps (p50 p90 p99 p99.9 max: each step is ten times rarer, a log scale
// in 1/(1-q)). Series are nudged sideways a little so that equal values do
// not hide each other.
package plot
