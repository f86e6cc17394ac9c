package load

import "testing"

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		body   string
		status int
		ok     bool
	}{
		{`{"statusCode":404,"body":"{\"message\":\"no\"}"}`, 404, true},
		{` {"headers":{"statusCode":"x"},"isBase64Encoded":false,"statusCode": 201}`, 201, true},
		{`{"statusCode":500}`, 500, true},
		{`{"StatusCode":404}`, 0, false}, // a door reads statusCode exactly
		{`{"body":"{\"statusCode\":500}"}`, 0, false},
		{`{"nested":{"statusCode":500}}`, 0, false},
		{`{"statusCode":"404"}`, 0, false},
		{`{"statusCode":404.5}`, 0, false},
		{`{"statusCode":-1}`, 0, false},
		{`[{"statusCode":404}]`, 0, false},
		{`"statusCode"`, 0, false},
		{`{"statusCode":`, 0, false},
		{`{"a":[1,{"b":2}],"statusCode":429,"c":null}`, 429, true},
		{``, 0, false},
	}
	for _, tt := range tests {
		s, ok := httpStatus([]byte(tt.body))
		if s != tt.status || ok != tt.ok {
			t.Errorf("httpStatus(%s) = %d, %v; want %d, %v", tt.body, s, ok, tt.status, tt.ok)
		}
	}
	if got := HTTPErrorCounts(map[int]int64{404: 3, 400: 5}); got != "status 400: 5, 404: 3" {
		t.Errorf("httpErrorCounts = %q", got)
	}
}

// FuzzHTTPStatus: whatever the answer, httpStatus returns, and a status
// it finds is a whole number of at most three digits.
func FuzzHTTPStatus(f *testing.F) {
	for _, s := range []string{`{"statusCode":404}`, `{"a":{"statusCode":1}}`, `{"statusCode":1e3}`, `{`, `{"statusCode"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, ok := httpStatus(b); ok && (s < 0 || s > 999) || !ok && s != 0 {
			t.Fatalf("httpStatus(%q) = %d, %v", b, s, ok)
		}
	})
}
