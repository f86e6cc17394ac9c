package events

import (
	"context"
	"errors"
	"net/http"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// HTTPAPI answers an API Gateway HTTP API request: it checks the route and
// the caller's scopes and answers 202 with a small body built by hand, so
// that the JSON work measured is the codec's.
func HTTPAPI(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	resp := events.APIGatewayV2HTTPResponse{
		Headers: map[string]string{
			"content-type":  "application/json",
			"cache-control": "no-store",
			"x-request-id":  req.Headers["x-request-id"],
		},
	}
	if req.RequestContext.HTTP.Method != http.MethodPost || req.PathParameters["customerId"] == "" {
		resp.StatusCode = 404
		resp.Body = `{"error":"no such route"}`
		return resp, nil
	}
	if a := req.RequestContext.Authorizer; a == nil || a.JWT == nil || !slices.Contains(a.JWT.Scopes, "orders:write") {
		resp.StatusCode = 403
		resp.Body = `{"error":"scope orders:write required"}`
		return resp, nil
	}
	b := make([]byte, 0, 160)
	b = append(b, `{"accepted":true,"customerId":`...)
	b = strconv.AppendQuote(b, req.PathParameters["customerId"])
	b = append(b, `,"currency":`...)
	b = strconv.AppendQuote(b, req.QueryStringParameters["currency"])
	b = append(b, `,"bodyBytes":`...)
	b = strconv.AppendInt(b, int64(len(req.Body)), 10)
	b = append(b, `,"cookies":`...)
	b = strconv.AppendInt(b, int64(len(req.Cookies)), 10)
	b = append(b, '}')
	resp.StatusCode = 202
	resp.Body = string(b)
	resp.Cookies = []string{"last-order=" + req.RequestContext.RequestID + "; Secure; HttpOnly"}
	return resp, nil
}

// SQS processes a batch: a message whose body is not a JSON object, or
// that names an unknown type, is reported as a batch item failure (partial
// batch response).
func SQS(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		kind := ""
		if a, ok := m.MessageAttributes["type"]; ok && a.StringValue != nil {
			kind = *a.StringValue
		}
		body := strings.TrimSpace(m.Body)
		if !strings.HasPrefix(body, "{") || (kind != "order.created" && kind != "order.paid" && kind != "order.shipped") {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// S3Summary is what S3 answers.
type S3Summary struct {
	Objects   int      `json:"objects"`
	Bytes     int64    `json:"bytes"`
	Buckets   []string `json:"buckets"`
	Keys      []string `json:"keys"`
	Documents int      `json:"documents"`
	LatestAt  string   `json:"latestAt"`
}

// S3 summarises a notification: sizes, buckets and the decoded keys.
func S3(_ context.Context, ev events.S3Event) (S3Summary, error) {
	var s S3Summary
	var latest time.Time
	for _, r := range ev.Records {
		o := r.S3.Object
		key := o.URLDecodedKey
		if key == "" {
			key = decodeS3Key(o.Key)
		}
		s.Objects++
		s.Bytes += o.Size
		s.Keys = append(s.Keys, key)
		if !slices.Contains(s.Buckets, r.S3.Bucket.Name) {
			s.Buckets = append(s.Buckets, r.S3.Bucket.Name)
		}
		if ext := path.Ext(key); ext == ".pdf" || ext == ".docx" {
			s.Documents++
		}
		if r.EventTime.After(latest) {
			latest = r.EventTime
		}
	}
	s.LatestAt = latest.UTC().Format(time.RFC3339)
	return s, nil
}

// decodeS3Key undoes the form encoding of object keys in notifications:
// '+' is a space and %XX a byte; a malformed escape is kept as it is.
func decodeS3Key(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(k):
			if v, err := strconv.ParseUint(k[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// PushSummary is what GitHubPush answers.
type PushSummary struct {
	Repository   string         `json:"repository"`
	Branch       string         `json:"branch"`
	Commits      int            `json:"commits"`
	Authors      []string       `json:"authors"`
	FilesChanged int            `json:"filesChanged"`
	ByDirectory  map[string]int `json:"byDirectory"`
	HeadMessage  string         `json:"headMessage"`
	Forced       bool           `json:"forced"`
}

var errNotBranch = errors.New("push to a tag, nothing to do")

// GitHubPush summarises a push: authors, files changed by top directory.
func GitHubPush(_ context.Context, ev PushEvent) (PushSummary, error) {
	branch, ok := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !ok {
		return PushSummary{}, errNotBranch
	}
	s := PushSummary{
		Repository: ev.Repository.FullName, Branch: branch, Commits: len(ev.Commits),
		ByDirectory: map[string]int{}, Forced: ev.Forced,
	}
	if ev.HeadCommit != nil {
		s.HeadMessage, _, _ = strings.Cut(ev.HeadCommit.Message, "\n")
	}
	seen := map[string]bool{}
	for _, c := range ev.Commits {
		if !seen[c.Author.Username] {
			seen[c.Author.Username] = true
			s.Authors = append(s.Authors, c.Author.Username)
		}
		for _, list := range [][]string{c.Added, c.Removed, c.Modified} {
			for _, f := range list {
				s.FilesChanged++
				dir, _, _ := strings.Cut(f, "/")
				s.ByDirectory[dir]++
			}
		}
	}
	sort.Strings(s.Authors)
	return s, nil
}
