package plot

import (
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func latencySeries() []LatencySeries {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	return []LatencySeries{
		{Name: "lmigo", Points: []Percentile{
			{0.5, ms(0.09)}, {0.9, ms(0.12)}, {0.99, ms(0.3)}, {0.999, ms(1.1)}, {1, ms(4.2)},
		}},
		{Name: "aws-lambda-go", Points: []Percentile{
			{1, ms(38)}, {0.999, ms(9.5)}, {0.99, ms(2.1)}, {0.9, ms(0.4)}, {0.5, ms(0.21)}, // any order
		}},
	}
}

func rssSeries() []RSSSeries {
	var a, b []RSSPoint
	for i := range 120 {
		t := time.Duration(i) * 100 * time.Millisecond
		a = append(a, RSSPoint{T: t, Bytes: int64(12+min(i, 30)) << 20})
		b = append(b, RSSPoint{T: t, Bytes: int64(14+min(4*i, 400)) << 20})
	}
	return []RSSSeries{{Name: "lmigo", Points: a}, {Name: "aws-lambda-go", Points: b}}
}

// readPNG decodes path and checks its size and that it is not blank.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != widthPx || b.Dy() != heightPx {
		t.Errorf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), widthPx, heightPx)
	}
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xF000 || g < 0xF000 || bl < 0xF000 {
				ink++
			}
		}
	}
	if share := float64(ink) / float64(b.Dx()*b.Dy()); share < 0.005 {
		t.Errorf("%s is nearly blank: %.2f%% of pixels are not white", path, 100*share)
	}
	return img
}

// hasColour reports whether some pixel of img is exactly c.
func hasColour(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				return true
			}
		}
	}
	return false
}

func TestPNGs(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		write func(path string) error
		n     int // series drawn
	}{
		{"latency", func(path string) error {
			return LatencyPNG(path, "Latency, tiny invocations, N=8", latencySeries())
		}, 2},
		{"rss", func(path string) error {
			return RSSPNG(path, "RSS, responses growing to 6 MiB, N=64", rssSeries())
		}, 2},
		{"latency one point", func(path string) error {
			return LatencyPNG(path, "one point", []LatencySeries{{Name: "lmigo", Points: []Percentile{{0.5, 0}}}})
		}, 1},
		{"rss one point, empty series skipped", func(path string) error {
			return RSSPNG(path, "one point", []RSSSeries{{Name: "none"}, {Name: "lmigo", Points: []RSSPoint{{0, 5 << 20}}}})
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".png")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			img := readPNG(t, path)
			for i := range tt.n {
				if c, _, _ := seriesStyle(i); !hasColour(img, c) {
					t.Errorf("series %d's colour %v is nowhere in the image", i, c)
				}
			}
		})
	}
}

func TestEmptyInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		write func(path string) error
	}{
		{"latency nil", func(p string) error { return LatencyPNG(p, "t", nil) }},
		{"latency no points", func(p string) error { return LatencyPNG(p, "t", []LatencySeries{{Name: "a"}}) }},
		{"rss nil", func(p string) error { return RSSPNG(p, "t", nil) }},
		{"rss no points", func(p string) error { return RSSPNG(p, "t", []RSSSeries{{Name: "a"}, {Name: "b"}}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "out.png")
			if err := tt.write(path); !errors.Is(err, ErrEmpty) {
				t.Fatalf("err = %v, want ErrEmpty", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a file was written: %v", err)
			}
		})
	}
}

func TestUnwritablePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "x.png")
	if err := RSSPNG(path, "t", rssSeries()); err == nil {
		t.Fatal("no error for a path in a missing directory")
	}
}

func TestQuantileLabel(t *testing.T) {
	tests := []struct {
		q    float64
		want string
	}{
		{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}, {0.9999, "p99.99"}, {1, "max"},
	}
	for _, tt := range tests {
		if got := quantileLabel(tt.q); got != tt.want {
			t.Errorf("quantileLabel(%v) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string // labels, in order
	}{
		{0, 520, []string{"0", "100", "200", "300", "400", "500"}},
		{0, 11.9, []string{"0", "2", "4", "6", "8", "10"}},
		{0, 1, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
		{3, 3, []string{"3"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tick := range (linearTicks{}).Ticks(tt.lo, tt.hi) {
			if tick.Label != "" {
				got = append(got, tick.Label)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Ticks(%v, %v) labels %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	var got []string
	for _, tick := range (logTicks{}).Ticks(0.06, 30) {
		if tick.Label != "" {
			got = append(got, tick.Label)
		}
	}
	want := []string{"0.1", "0.2", "0.5", "1", "2", "5", "10", "20"}
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
