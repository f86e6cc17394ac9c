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
