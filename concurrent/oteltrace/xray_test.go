package oteltrace_test

import (
	"errors"
	"testing"

	"github.com/lmigo/lmigo/concurrent/oteltrace"
	"go.opentelemetry.io/otel/trace"
)

func TestParseHeader(t *testing.T) {
	tests := []struct {
		header  string
		trace   string
		span    string
		sampled bool
		err     bool
	}{
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
			trace: "5759e988bd862e3fe1be46a994272793", span: "53995c3f42cd8ad8", sampled: true},
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0",
			trace: "5759e988bd862e3fe1be46a994272793", span: "53995c3f42cd8ad8"},
		{header: "Parent=53995c3f42cd8ad8; Root=1-5759E988-BD862E3FE1BE46A994272793; Sampled=?;Lineage=a87bd80c:1|68fd508a:5",
			trace: "5759e988bd862e3fe1be46a994272793", span: "53995c3f42cd8ad8"},
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;",
			trace: "5759e988bd862e3fe1be46a994272793", span: "53995c3f42cd8ad8"},
		{header: "", err: true},
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1", err: true},               // no Parent
		{header: "Parent=53995c3f42cd8ad8;Sampled=1", err: true},                                // no Root
		{header: "Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", err: true}, // version
		{header: "Root=1-5759e988-bd862e3fe1be46a99427279;Parent=53995c3f42cd8ad8", err: true},  // short
		{header: "Root=1-5759e988bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", err: true},  // no dash
		{header: "Root=1-5759e98g-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", err: true}, // not hex
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad", err: true},
		{header: "Root=1-00000000-000000000000000000000000;Parent=53995c3f42cd8ad8", err: true}, // zero
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=0000000000000000", err: true}, // zero
		{header: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent", err: true},
	}
	for _, tt := range tests {
		sc, err := oteltrace.ParseHeader(tt.header)
		if tt.err {
			if !errors.Is(err, oteltrace.ErrInvalidHeader) {
				t.Errorf("ParseHeader(%q) = %v, %v; want ErrInvalidHeader", tt.header, sc, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseHeader(%q): %v", tt.header, err)
			continue
		}
		if sc.TraceID().String() != tt.trace || sc.SpanID().String() != tt.span || sc.IsSampled() != tt.sampled || !sc.IsRemote() {
			t.Errorf("ParseHeader(%q) = trace %s span %s sampled %v remote %v; want %s %s %v true",
				tt.header, sc.TraceID(), sc.SpanID(), sc.IsSampled(), sc.IsRemote(), tt.trace, tt.span, tt.sampled)
		}
	}
}

func TestFormatHeader(t *testing.T) {
	const h = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	sc, err := oteltrace.ParseHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	if got := oteltrace.FormatHeader(sc); got != h {
		t.Errorf("FormatHeader = %q, want %q", got, h)
	}
	if got := oteltrace.FormatHeader(trace.SpanContext{}); got != "" {
		t.Errorf("FormatHeader(invalid) = %q, want \"\"", got)
	}
}

// FuzzParseHeader: the header comes from outside the process. Whatever it
// is, ParseHeader does not panic, and what it accepts is a valid remote
// span context that FormatHeader writes back to the same one.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
		"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0;Lineage=a:1",
		"Parent=53995c3f42cd8ad8;Root=1-5759e988-bd862e3fe1be46a994272793",
		";;Root=;Parent=;Sampled=",
		"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Sampled=0",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		sc, err := oteltrace.ParseHeader(h)
		if err != nil {
			if !errors.Is(err, oteltrace.ErrInvalidHeader) {
				t.Fatalf("ParseHeader(%q): error %v does not wrap ErrInvalidHeader", h, err)
			}
			if sc.IsValid() {
				t.Fatalf("ParseHeader(%q): a valid span context with an error", h)
			}
			return
		}
		if !sc.IsValid() || !sc.IsRemote() {
			t.Fatalf("ParseHeader(%q) = %v: not a valid remote span context", h, sc)
		}
		again, err := oteltrace.ParseHeader(oteltrace.FormatHeader(sc))
		if err != nil || !again.Equal(sc) {
			t.Fatalf("round trip of %q: %v, %v; want %v", h, again, err, sc)
		}
	})
}
