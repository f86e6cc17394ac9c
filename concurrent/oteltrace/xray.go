package oteltrace

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// HeaderName is the HTTP header that carries an X-Ray trace header between
// AWS services; Lambda hands the same value to the runtime as
// Lambda-Runtime-Trace-Id.
const HeaderName = "X-Amzn-Trace-Id"

// maxHeaderLen bounds the header ParseHeader reads. A header of Lambda's is
// about 90 bytes; X-Ray keeps 256 at most.
const maxHeaderLen = 1024

// Errors of ParseHeader, wrapped with detail.
var (
	// ErrInvalidHeader: the header is not an X-Ray trace header with a
	// valid Root and Parent.
	ErrInvalidHeader = errors.New("oteltrace: invalid X-Ray trace header")
)

// ParseHeader reads an X-Ray trace header,
// "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
// into a remote span context: the trace ID is Root's epoch and unique parts
// (5759e988bd862e3fe1be46a994272793), the span ID is Parent, and the span
// is sampled when Sampled=1. Sampled=0, Sampled=? (a decision left to the
// receiver) and no Sampled all give a span context that is not sampled.
// Other fields (Lineage, Self) are ignored. Root and Parent are required
// and must not be all zeros; field names are case-sensitive, values are hex
// in either case.
func ParseHeader(h string) (trace.SpanContext, error) {
	if len(h) > maxHeaderLen {
		return trace.SpanContext{}, invalid("header too long")
	}
	var (
		cfg                trace.SpanContextConfig
		haveRoot, haveSpan bool
	)
	for rest := h; rest != ""; {
		var field string
		field, rest, _ = strings.Cut(rest, ";")
		key, value, ok := strings.Cut(strings.TrimSpace(field), "=")
		if !ok {
			if strings.TrimSpace(field) == "" {
				continue // "a;;b", or a trailing ";"
			}
			return trace.SpanContext{}, invalid("field without '='")
		}
		switch key {
		case "Root":
			if !parseRoot(value, &cfg.TraceID) {
				return trace.SpanContext{}, invalid("bad Root")
			}
			haveRoot = true
		case "Parent":
			if len(value) != 2*len(cfg.SpanID) || !decodeHex(cfg.SpanID[:], value) {
				return trace.SpanContext{}, invalid("bad Parent")
			}
			haveSpan = true
		case "Sampled":
			cfg.TraceFlags = 0
			if value == "1" {
				cfg.TraceFlags = trace.FlagsSampled
			}
		}
	}
	if !haveRoot || !haveSpan {
		return trace.SpanContext{}, invalid("no Root or no Parent")
	}
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	if !sc.IsValid() {
		return trace.SpanContext{}, invalid("zero trace or span ID")
	}
	return sc, nil
}

func invalid(why string) error { return fmt.Errorf("%w: %s", ErrInvalidHeader, why) }

// parseRoot reads "1-" + 8 hex digits (the epoch) + "-" + 24 hex digits.
func parseRoot(v string, id *trace.TraceID) bool {
	const want = len("1-5759e988-bd862e3fe1be46a994272793")
	if len(v) != want || v[:2] != "1-" || v[10] != '-' {
		return false
	}
	return decodeHex(id[:4], v[2:10]) && decodeHex(id[4:], v[11:])
}

// FormatHeader writes sc as an X-Ray trace header, the inverse of
// ParseHeader: Root, Parent and Sampled (0 or 1). It returns "" for a span
// context that is not valid.
func FormatHeader(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	const n = len("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	b := make([]byte, 0, n)
	tid, sid := sc.TraceID(), sc.SpanID()
	b = append(b, "Root=1-"...)
	b = appendHex(b, tid[:4])
	b = append(b, '-')
	b = appendHex(b, tid[4:])
	b = append(b, ";Parent="...)
	b = appendHex(b, sid[:])
	if sc.IsSampled() {
		b = append(b, ";Sampled=1"...)
	} else {
		b = append(b, ";Sampled=0"...)
	}
	return string(b)
}

const hexDigits = "0123456789abcdef"

func appendHex(b, src []byte) []byte {
	for _, c := range src {
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

// decodeHex fills dst from exactly 2*len(dst) hex digits of s, without the
// allocation of hex.DecodeString.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
