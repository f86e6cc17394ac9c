package lambdatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// member is one top-level member of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// members returns every top-level member of the JSON object line, in
// order, a repeated key each time it comes; ok is false when line is not
// one JSON object. Decoding into a map or a struct would keep one value of
// a repeated key, and match keys without regard to case.
func members(line []byte) (ms []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{key, v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return ms, true
}
