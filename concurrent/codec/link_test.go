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

func deps(t *testing.T, tags, pkg string) string {
	t.Helper()
	args := []string{"list", "-deps", "-tags", tags, pkg}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestBootstrapLinksOnlyChosenCodecs: a bootstrap that imports no codec
// package links no third-party JSON library, and one that imports a codec
// links that one alone.
func TestBootstrapLinksOnlyChosenCodecs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	for _, pkg := range []string{"github.com/lmigo/lmigo/cmd/bootstrap", "github.com/lmigo/lmigo/loadtest/events/lmigo"} {
		d := deps(t, "lambda.norpc", pkg)
		for _, m := range thirdParty {
			if strings.Contains(d, m) {
				t.Errorf("%s links %s without choosing it", pkg, m)
			}
		}
	}
	d := deps(t, "lambda.norpc,codec_goccy", "github.com/lmigo/lmigo/loadtest/events/lmigo")
	for _, m := range thirdParty {
		if got, want := strings.Contains(d, m), m == "github.com/goccy/go-json"; got != want {
			t.Errorf("with codec_goccy: links %s = %v, want %v", m, got, want)
		}
	}
}
