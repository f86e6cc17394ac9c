package limits

import (
	"slices"
	"testing"
)

// TestVarsComplete checks that Vars names exactly the variables FromEnv
// looks up, in the same order, so a table generated from Vars is whole.
func TestVarsComplete(t *testing.T) {
	t.Parallel()
	var looked []string
	_, _ = FromEnv(func(k string) (string, bool) {
		looked = append(looked, k)
		return "", false
	})
	var listed []string
	seen := map[string]bool{}
	for _, v := range Vars() {
		if v.Name == "" || v.Meaning == "" {
			t.Errorf("incomplete Var %+v", v)
		}
		if seen[v.Name] {
			t.Errorf("%s listed twice", v.Name)
		}
		seen[v.Name] = true
		listed = append(listed, v.Name)
	}
	if !slices.Equal(looked, listed) {
		t.Errorf("FromEnv looks up\n %v\nVars lists\n %v", looked, listed)
	}
}

// TestVarsDefaults checks that each concrete Default in Vars, set
// explicitly, gives the same Config as leaving the variable unset.
func TestVarsDefaults(t *testing.T) {
	t.Parallel()
	defs := map[string]string{}
	for _, v := range Vars() {
		defs[v.Name] = v.Default
	}
	base := map[string]string{envRuntimeAPI: testAPI, envMaxConcurrency: "16"}
	want, err := FromEnv(mapEnv(base))
	if err != nil {
		t.Fatal(err)
	}
	concrete := []string{envMaxConcurrency, envBufferRetain, envMaxRequest,
		envMaxResponse, envMemoryLimitFraction, envLogLevel, envShutdownTimeout, envOverrunGrace, envWedgedExit, envMetrics, envMetricsInterval}
	for _, name := range concrete {
		if name == envMaxConcurrency {
			// Its default only shows without the base's value.
			got, err := FromEnv(mapEnv(map[string]string{envRuntimeAPI: testAPI, name: defs[name]}))
			if err != nil || got.MaxConcurrency != 1 {
				t.Errorf("%s=%q: got N=%d, %v", name, defs[name], got.MaxConcurrency, err)
			}
			continue
		}
		env := withAPI(base)
		env[name] = defs[name]
		got, err := FromEnv(mapEnv(env))
		if err != nil || got != want {
			t.Errorf("%s=%q: got %+v, %v\nwant %+v", name, defs[name], got, err, want)
		}
	}
	if defs[envRuntimeAPI] != "required" {
		t.Errorf("%s Default = %q, want required", envRuntimeAPI, defs[envRuntimeAPI])
	}
	if want.Slots != want.MaxConcurrency || defs[envSlots] != "N" {
		t.Errorf("Slots default: Config %d of N=%d, Vars says %q", want.Slots, want.MaxConcurrency, defs[envSlots])
	}
	if want.MaxOverruns != want.Slots || defs[envMaxOverruns] != "LMIGO_SLOTS" {
		t.Errorf("MaxOverruns default: Config %d of %d slots, Vars says %q", want.MaxOverruns, want.Slots, defs[envMaxOverruns])
	}
}

func TestVarsFresh(t *testing.T) {
	t.Parallel()
	a := Vars()
	a[0].Name = "changed"
	if Vars()[0].Name == "changed" {
		t.Error("Vars returns shared storage")
	}
}

func TestUnknownVars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		want    []Unknown
	}{
		{"none", nil, nil},
		{"known and others", []string{"LMIGO_SLOTS=4", "LMIGO_WORKERS=4", "HOME=/root", "AWS_LAMBDA_RUNTIME_API=x"}, nil},
		{"tools", []string{"LMIGO_RIE_EXEC=qemu", "LMIGO_SOAK_FORM=raw"}, nil},
		{"missing letter", []string{"LMIGO_SLOT=4"}, []Unknown{{"LMIGO_SLOT", "LMIGO_SLOTS"}}},
		{"typo", []string{"LMIGO_BUFER_RETAIN_BYTES=1MiB"}, []Unknown{{"LMIGO_BUFER_RETAIN_BYTES", "LMIGO_BUFFER_RETAIN_BYTES"}}},
		{"lower case", []string{"lmigo_sigterm=on"}, []Unknown{{"lmigo_sigterm", "LMIGO_SIGTERM"}}},
		{"no value", []string{"LMIGO_METRIC"}, []Unknown{{"LMIGO_METRIC", "LMIGO_METRICS"}}},
		{"every one, in order, once", []string{"LMIGO_OVERRUN_GRACES=1s", "PATH=/bin", "LMIGO_MAXOVERRUNS=2", "LMIGO_OVERRUN_GRACES=2s"},
			[]Unknown{{"LMIGO_OVERRUN_GRACES", "LMIGO_OVERRUN_GRACE"}, {"LMIGO_MAXOVERRUNS", "LMIGO_MAX_OVERRUNS"}}},
		{"prefix alone", []string{"LMIGO_=1"}, []Unknown{{"LMIGO_", "LMIGO_SLOTS"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := UnknownVars(tt.environ); !slices.Equal(got, tt.want) {
				t.Errorf("UnknownVars(%q) = %v, want %v", tt.environ, got, tt.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"LMIGO_SLOT", "LMIGO_SLOTS", 1}, {"same", "same", 0},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
