package rapitest

import (
	"net/http"
	"strconv"
)

// A reply of the fake Runtime API: JSON, with its Content-Length, written
// by every handler and by a Status fault alike.

// smallLengths are Content-Length values of the replies' own bodies,
// shared and read only, so that a reply (one per post) allocates none.
var smallLengths = func() (l [256][]string) {
	for i := range l {
		l[i] = []string{strconv.Itoa(i)}
	}
	return l
}()

// reply writes a JSON reply with its Content-Length.
func reply(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h[hdrContentType] = valContentType
	if len(body) < len(smallLengths) {
		h[hdrContentLength] = smallLengths[len(body)]
	} else {
		h[hdrContentLength] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
