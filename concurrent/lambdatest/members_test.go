package lambdatest

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestMembers(t *testing.T) {
	tests := []struct {
		line string
		want []string // key=value, in order; nil: not an object
	}{
		{`{"a":1,"b":"x"}`, []string{`a=1`, `b="x"`}},
		{`{"user":"alice","user":"bob"}`, []string{`user="alice"`, `user="bob"`}},
		{`{"requestId":"r1","requestID":"d","RequestId":"e"}`, []string{`requestId="r1"`, `requestID="d"`, `RequestId="e"`}},
		{` {"n":{"requestId":"in"},"l":[1,{"a":2}]} `, []string{`n={"requestId":"in"}`, `l=[1,{"a":2}]`}},
		{`{"request\u0049d":"r"}`, []string{`requestId="r"`}},
		{`{}`, []string{}},
		{`[1]`, nil},
		{`{"a":1}{"b":2}`, nil},
		{`{"a":1`, nil},
		{`{"a":}`, nil},
		{`not json`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		ms, ok := members([]byte(tt.line))
		if ok != (tt.want != nil) {
			t.Errorf("members(%s): ok %v", tt.line, ok)
			continue
		}
		got := []string{}
		for _, m := range ms {
			got = append(got, m.key+"="+string(m.value))
		}
		if ok && !slices.Equal(got, tt.want) {
			t.Errorf("members(%s) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// FuzzMembers: members reads exactly the JSON objects, and every member
// a map would hold is among those it gives.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"requestId":"x","b":[{}]}`, `{`, `[]`, `{"a":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ms, ok := members(line)
		var m map[string]json.RawMessage
		isObject := json.Unmarshal(line, &m) == nil && m != nil
		if ok != isObject {
			t.Fatalf("members(%q): ok %v, but an object: %v", line, ok, isObject)
		}
		for k, v := range m {
			if !slices.ContainsFunc(ms, func(x member) bool { return x.key == k && bytes.Equal(x.value, v) }) {
				t.Fatalf("members(%q) lacks %s=%s", line, k, v)
			}
		}
	})
}
