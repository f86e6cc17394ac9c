package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// An HTTP door (API Gateway, a function URL, a load balancer) turns an
// answer with a statusCode into an HTTP response: a 404 or a 500 is an
// answer that went wrong, however well the invocation ended.

// httpStatus is the statusCode of an answer shaped like an HTTP door's
// response: a JSON object whose top-level member "statusCode", matched
// exactly, is a whole number. ok is false for any other answer.
func httpStatus(body []byte) (status int, ok bool) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || !bytes.Contains(body, []byte(`"statusCode"`)) {
		return 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil { // the '{'
		return 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if key != "statusCode" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0, false
			}
			continue
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return 0, false
		}
		v, err := strconv.Atoi(string(raw)) // a number, not a string
		if err != nil || v < 0 || v > 999 {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// httpError reports whether body is an HTTP door's response with a
// status of 400 or more.
func httpError(body []byte) bool {
	s, ok := httpStatus(body)
	return ok && s >= 400
}

// HTTPErrorCounts says how many answers were HTTP errors, by status:
// "status 400: 5, 404: 3".
func HTTPErrorCounts(byStatus map[int]int64) string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(byStatus)) {
		parts = append(parts, fmt.Sprintf("%d: %d", s, byStatus[s]))
	}
	return "status " + strings.Join(parts, ", ")
}

// HTTPWords says how many of a load's wrong answers were HTTP errors,
// counted by status, and how to accept them: "" when none was.
func HTTPWords(byStatus map[int]int64) string {
	n := SumCounts(byStatus)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them HTTP errors, %s: -expect REGEXP accepts answers it matches)", n, HTTPErrorCounts(byStatus))
}

// SumCounts is the sum of counts.
func SumCounts(counts map[int]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}
