package codec_test

import (
	"os/exec"
	"strings"
	"testing"
)

// thirdParty are the modules the codec packages bring in.
var thirdParty = []string{
	"github.com/bytedance/sonic", "github.com/goccy/go-json",
	"github.com/segmentio/encoding", "github.com/go-json-experiment/json",
}

// deps lists what pkg links, from the module in dir (relative to this
// package): loadtest/events/lmigo is in the loadtest module, which
// requires the codec modules; the runtime's module does not.
func deps(t *testing.T, dir, tags, pkg string) string {
	t.Helper()
	args := []string{"list", "-deps", "-tags", tags, pkg}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

const loadtestDir = "../../loadtest"

// TestBootstrapLinksOnlyChosenCodecs: a bootstrap that imports no codec
// package links no third-party JSON library, and one that imports a codec
// links that one alone.
func TestBootstrapLinksOnlyChosenCodecs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	for _, c := range []struct{ dir, pkg string }{
		{".", "github.com/lmigo/lmigo/cmd/bootstrap"},
		{loadtestDir, "github.com/lmigo/lmigo/loadtest/events/lmigo"},
	} {
		d := deps(t, c.dir, "lambda.norpc", c.pkg)
		for _, m := range thirdParty {
			if strings.Contains(d, m) {
				t.Errorf("%s links %s without choosing it", c.pkg, m)
			}
		}
	}
	d := deps(t, loadtestDir, "lambda.norpc,codec_goccy", "github.com/lmigo/lmigo/loadtest/events/lmigo")
	for _, m := range thirdParty {
		if got, want := strings.Contains(d, m), m == "github.com/goccy/go-json"; got != want {
			t.Errorf("with codec_goccy: links %s = %v, want %v", m, got, want)
		}
	}
}
