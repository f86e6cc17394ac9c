package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunReportRates: the report says what was offered and what was
// answered, apart, and says why its CPU per invocation is not the
// README's figure.
func TestRunReportRates(t *testing.T) {
	tests := []struct {
		model string
		want  []string
		not   []string
	}{
		{modelOpen, []string{
			"  offered rate ", "1000 invocations/s, open loop",
			"  answered rate ", "1000 invocations/s in the measured window",
			"below saturation", "mix-panic (answers up to 64 KiB", "the README's CPU figure is tiny invocations at N=64, the runtime saturated",
		}, []string{"throughput", "the rate offered"}},
		{modelClosed, []string{
			"  offered load ", "8 callers, each sending its next invocation the moment it has an answer",
			"  answered rate ", "mix-panic",
		}, []string{"throughput", "below saturation"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printRun(&b, runReport(t, tt.model))
		out := b.String()
		for _, s := range tt.want {
			if !strings.Contains(out, s) {
				t.Errorf("%s: report lacks %q:\n%s", tt.model, s, out)
			}
		}
		for _, s := range tt.not {
			if strings.Contains(out, s) {
				t.Errorf("%s: report says %q:\n%s", tt.model, s, out)
			}
		}
	}
}

// TestRunNotesMatchReport: the notes of a run speak only of what its
// report shows: no ratios, no floor, no table columns it does not print.
func TestRunNotesMatchReport(t *testing.T) {
	rep := runReport(t, modelOpen)
	rep.Notes = runNotes(rep.Config, rep.Scenarios[0].Scenario)
	md := string(markdown(rep))
	for _, s := range []string{`(?i)\bratios?\b`, `\bfloor\b`, `thr/1k`, `rej %`, `drv CPU`, `\| scenario \| runtime \| inv/s`} {
		if regexp.MustCompile(s).MatchString(md) {
			t.Errorf("run.md speaks of %q, which the run report does not show:\n%s", s, md)
		}
	}
	for _, s := range []string{"CPU per invocation", "from the intended send time", "Peak RSS"} {
		if !strings.Contains(md, s) {
			t.Errorf("run.md does not explain %q:\n%s", s, md)
		}
	}
}

// TestWrittenPaths: the report lists the files it wrote where they are,
// whatever the directory the load test runs in.
func TestWrittenPaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	rep := runReport(t, modelOpen)
	var out bytes.Buffer
	rep.Config.Out, rep.Config.stdout = "out", &out
	if err := writeReports(rep.Config, rep, "run"); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "out", "run.json")
	if !strings.Contains(out.String(), "written: "+want+" ") {
		t.Errorf("printed %q, want the files by their path, %s first", out.String(), want)
	}
}
