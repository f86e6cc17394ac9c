package report

import (
	"reflect"
	"testing"

	"github.com/lmigo/lmigo/loadtest/bench"
	"github.com/lmigo/lmigo/loadtest/target"
)

func TestTargets(t *testing.T) {
	s := bench.DefaultSettings()
	s.Env = []string{"LMIGO_BUFFER_RETAIN_BYTES=256KiB"}
	sc, err := bench.NewScenario(s, bench.Row{Workload: "grow", N: 64})
	if err != nil {
		t.Fatal(err)
	}
	sr := ScenarioReport{Scenario: sc, Medians: map[string]map[string]float64{
		target.Lmigo:       {bench.RSSGrowth: 7.9, bench.PeakRSS: 41},
		target.LmigoRaw:    {bench.RSSGrowth: 24.1}, // 64 x 256 KiB + 8 MiB = 24 MiB
		target.AWSLambdaGo: {bench.RSSGrowth: 900},
	}}
	got := checkTargets(s, sr)
	want := []TargetCheck{
		{Runtime: target.Lmigo, What: "RSS after - RSS before <= 8 MiB", Value: 7.9, Limit: 8, Holds: true},
		{Runtime: target.Lmigo, What: "peak RSS at N=64 <= 40 MiB", Value: 41, Limit: 40, Holds: false},
		{Runtime: target.LmigoRaw, What: "RSS after - RSS before <= N x retain cap + 8 MiB (64 x 256KiB + 8 MiB)", Value: 24.1, Limit: 24, Holds: false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets:\n%+v\nwant\n%+v", got, want)
	}
}
