package rapitest

import (
	"crypto/rand"
	"strconv"
	"time"
)

const hexDigits = "0123456789abcdef"

// idLen is the length of a UUID-shaped ID: 8-4-4-4-12 hex digits.
const idLen = 36

// ids makes the request, invocation and trace IDs of one server. An ID is a
// random per-server prefix followed by the invocation's sequence number. So a
// posted ID can be told apart as "never handed out" or "already answered"
// without keeping every answered ID.
type ids struct {
	request    string // "xxxxxxxx-xxxx-4xxx-8xxx-", 24 bytes
	invocation string // same shape, another random prefix
	trace      string // 12 hex digits
}

func newIDs() ids {
	var r [26]byte
	_, _ = rand.Read(r[:]) // never fails on supported platforms (Go 1.24+)
	return ids{
		request:    uuidPrefix(r[0:10]),
		invocation: uuidPrefix(r[10:20]),
		trace:      string(appendHex(nil, uint64(r[20])<<40|uint64(r[21])<<32|uint64(r[22])<<24|uint64(r[23])<<16|uint64(r[24])<<8|uint64(r[25]), 12)),
	}
}

// uuidPrefix formats 10 random bytes as the first four groups of a version 4
// UUID, with the trailing dash.
func uuidPrefix(r []byte) string {
	b := make([]byte, 0, 24)
	for i, c := range r {
		switch i {
		case 6:
			c = 0x40 | c&0x0f // version 4
		case 8:
			c = 0x80 | c&0x3f // RFC 4122 variant
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0x0f])
		if i == 3 || i == 5 || i == 7 || i == 9 {
			b = append(b, '-')
		}
	}
	return string(b)
}

// appendHex appends the low 4*n bits of v as n hex digits.
func appendHex(b []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, hexDigits[(v>>(4*uint(i)))&0x0f])
	}
	return b
}

// formatID returns prefix followed by seq as 12 hex digits.
func formatID(prefix string, seq uint64) string {
	var b [idLen]byte
	n := copy(b[:], prefix)
	return string(appendHex(b[:n], seq, 12))
}

// parseID returns the sequence number of an ID made by formatID with this
// prefix. It is fed bytes from the network (a URL path segment).
func parseID(prefix, id string) (uint64, bool) {
	if len(id) != len(prefix)+12 || id[:len(prefix)] != prefix {
		return 0, false
	}
	var seq uint64
	for i := len(prefix); i < len(id); i++ {
		c := id[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		seq = seq<<4 | uint64(c)
	}
	return seq, true
}

// traceID returns an X-Ray trace header for the invocation seq.
func (g ids) traceID(now time.Time, seq uint64) string {
	b := make([]byte, 0, 80)
	b = append(b, "Root=1-"...)
	b = appendHex(b, uint64(now.Unix()), 8)
	b = append(b, '-')
	b = append(b, g.trace...)
	b = appendHex(b, seq, 12)
	b = append(b, ";Parent="...)
	b = appendHex(b, seq, 16)
	b = append(b, ";Sampled=0"...)
	return string(b)
}

// deadlineMs formats a deadline as Lambda-Runtime-Deadline-Ms does.
func deadlineMs(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
