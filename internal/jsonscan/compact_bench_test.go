package jsonscan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCompactJSON: the check of a json.RawMessage result sent
// direct, beside json.Valid and json.Compact (into a reused buffer, what
// the encoder does with a RawMessage) on the same bodies. Large responses
// are mostly long strings: base64 holds four base64 values, text one
// string of prose with occasional escapes (\" \\ \n) and non-ASCII
// UTF-8 (é, €, and em dashes, whose first byte E2 is U+2028's). objects
// is the structure-heavy case: small objects of numbers, literals and
// short keys, a byte in 5 one that skipString stops at.
func BenchmarkCompactJSON(b *testing.B) {
	bodies := []struct {
		name string
		b    []byte
	}{
		{"base64-1MiB", benchBase64Body(1 << 20)},
		{"base64-6MiB", benchBase64Body(6 << 20)},
		{"text-1MiB", benchTextBody(1 << 20)},
		{"text-6MiB", benchTextBody(6 << 20)},
		{"objects-1MiB", benchObjectsBody(1 << 20)},
	}
	var buf bytes.Buffer
	impls := []struct {
		name string
		f    func([]byte) bool
	}{
		{"Compact", Compact},
		{"json.Valid", json.Valid},
		{"json.Compact", func(in []byte) bool {
			buf.Reset()
			return json.Compact(&buf, in) == nil
		}},
	}
	for _, body := range bodies {
		if !refCompact(body.b) {
			b.Fatalf("%s: not compact JSON", body.name)
		}
		for _, impl := range impls {
			b.Run("body="+body.name+"/impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body.b)))
				for b.Loop() {
					if !impl.f(body.b) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}

// benchBase64Body is an object of four base64 strings, about n bytes.
func benchBase64Body(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, (n/4-16)/4*3)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	enc := base64.StdEncoding.EncodeToString(raw)
	out := []byte(`{`)
	for i, k := range []string{"a", "b", "c", "d"} {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `"`+k+`":"`+enc+`"`...)
	}
	return append(out, '}')
}

// benchTextBody is an object holding one string of prose, about n bytes,
// one word in twelve an escape or non-ASCII: about one byte in 70 is one
// skipString stops at.
func benchTextBody(n int) []byte {
	words := strings.Fields("the runtime sends a response from the handler's own bytes when it is " +
		"valid JSON with no whitespace outside strings otherwise the encoder compacts it byte for byte " +
		"as aws-lambda-go does for every invocation of a function on a managed instance")
	special := []string{`\"quoted\"`, `C:\\dir`, `end.\n`, "café", "naïve", "€42", "—", "über", "日本語"}
	r := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	sb.WriteString(`{"id":"doc-1","text":"`)
	for sb.Len() < n-2 {
		if r.IntN(12) == 0 {
			sb.WriteString(special[r.IntN(len(special))])
		} else {
			sb.WriteString(words[r.IntN(len(words))])
		}
		sb.WriteByte(' ')
	}
	sb.WriteString(`"}`)
	return []byte(sb.String())
}

// benchObjectsBody is an array of small objects, about n bytes.
func benchObjectsBody(n int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	lits := []string{"true", "false", "null"}
	var sb strings.Builder
	sb.WriteString(`[`)
	for sb.Len() < n-1 {
		if sb.Len() > 1 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":`)
		sb.WriteString(strconv.Itoa(r.IntN(100000)))
		sb.WriteString(`,"v":-`)
		sb.WriteString(strconv.Itoa(r.IntN(1000)))
		sb.WriteString(`.5e3,"ok":`)
		sb.WriteString(lits[r.IntN(3)])
		sb.WriteString(`,"n":[`)
		sb.WriteString(strconv.Itoa(r.IntN(10)))
		sb.WriteString(`,`)
		sb.WriteString(strconv.Itoa(r.IntN(100)))
		sb.WriteString(`],"k":"ab"}`)
	}
	sb.WriteString(`]`)
	return []byte(sb.String())
}
