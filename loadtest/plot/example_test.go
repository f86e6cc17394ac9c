package plot_test

import (
	"fmt"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/lmigo/lmigo/loadtest/plot"
)

func ExampleLatencyPNG() {
	dir, err := os.MkdirTemp("", "plot-example-")
	if err != nil {
		log.Fatal(err)
	}
	w, h, err := drawLatency(filepath.Join(dir, "latency.png"))
	_ = os.RemoveAll(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%dx%d\n", w, h)
	// Output: 800x500
}

// drawLatency draws a latency chart into path and returns its size.
func drawLatency(path string) (width, height int, err error) {
	err = plot.LatencyPNG(path, "Latency, tiny invocations, N=8", []plot.LatencySeries{
		{Name: "lmigo", Points: []plot.Percentile{
			{Q: 0.5, Value: 90 * time.Microsecond}, {Q: 0.99, Value: 300 * time.Microsecond}, {Q: 1, Value: 4 * time.Millisecond},
		}},
		{Name: "aws-lambda-go", Points: []plot.Percentile{
			{Q: 0.5, Value: 210 * time.Microsecond}, {Q: 0.99, Value: 2 * time.Millisecond}, {Q: 1, Value: 38 * time.Millisecond},
		}},
	})
	if err != nil {
		return 0, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	return cfg.Width, cfg.Height, err
}
