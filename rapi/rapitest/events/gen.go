package events

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// The generated payloads: deterministic (a fixed seed), written to
// testdata by TestTestdata -update. Values are made up but shaped like the
// real thing.

func hexID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)
}

func uuid(r *rand.Rand) string {
	h := hexID(r, 16)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

func str(s string) *string { return &s }

// genSQS is a batch of 10 order messages; message 4 is not JSON and
// message 8 has an unknown type, so the handler reports two failures.
func genSQS() []byte {
	r := rand.New(rand.NewPCG(8, 10))
	kinds := []string{"order.created", "order.paid", "order.shipped"}
	skus := []string{"BK-1142-DE", "MG-0007", "TS-L-NAVY", "HD-220-GRY", "CB-USB-C-2M", "NB-A5-DOT"}
	base := time.Date(2026, 11, 29, 14, 21, 0, 0, time.UTC)
	var ev events.SQSEvent
	for i := range 10 {
		kind := kinds[i%len(kinds)]
		var body string
		switch i {
		case 4:
			body = "order 3381 shipped (legacy plain-text producer)"
		default:
			var items []string
			for j := range 1 + r.IntN(4) {
				items = append(items, fmt.Sprintf(`{"sku":%q,"qty":%d,"unitCents":%d,"line":%d}`,
					skus[r.IntN(len(skus))], 1+r.IntN(3), 499+r.IntN(9000), j+1))
			}
			body = fmt.Sprintf(`{"orderId":"o-%d","customerId":"c-%d","event":%q,"at":%q,"items":[%s],"total":{"cents":%d,"currency":"EUR"},"note":"Lieferung an Packstation – bitte <sorgfältig> behandeln & danke"}`,
				3370+i, 20000+r.IntN(9000), kind, base.Add(time.Duration(i)*1700*time.Millisecond).Format(time.RFC3339Nano),
				strings.Join(items, ","), 1000+r.IntN(50000))
		}
		if i == 8 {
			kind = "order.refunded"
		}
		sum := md5.Sum([]byte(body))
		sent := base.Add(time.Duration(i) * 1700 * time.Millisecond).UnixMilli()
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId:              uuid(r),
			ReceiptHandle:          "AQEB" + strings.Repeat(hexID(r, 24), 4) + "==",
			Body:                   body,
			Md5OfBody:              hex.EncodeToString(sum[:]),
			Md5OfMessageAttributes: hexID(r, 16),
			Attributes: map[string]string{
				"ApproximateReceiveCount":          fmt.Sprint(1 + i%3),
				"SentTimestamp":                    fmt.Sprint(sent),
				"SenderId":                         "AROA4EXAMPLE7QZ3K2M:order-service",
				"ApproximateFirstReceiveTimestamp": fmt.Sprint(sent + 37),
				"MessageGroupId":                   "orders",
				"SequenceNumber":                   fmt.Sprint(18890000000000000+uint64(i)*17) + "000",
				"MessageDeduplicationId":           hexID(r, 16),
			},
			MessageAttributes: map[string]events.SQSMessageAttribute{
				"type":          {StringValue: str(kind), DataType: "String", StringListValues: []string{}, BinaryListValues: [][]byte{}},
				"schemaVersion": {StringValue: str("3"), DataType: "Number", StringListValues: []string{}, BinaryListValues: [][]byte{}},
				"traceparent": {StringValue: str("00-" + hexID(r, 16) + "-" + hexID(r, 8) + "-01"), DataType: "String",
					StringListValues: []string{}, BinaryListValues: [][]byte{}},
			},
			EventSourceARN: "arn:aws:sqs:eu-central-1:123456789012:orders.fifo",
			EventSource:    "aws:sqs",
			AWSRegion:      "eu-central-1",
		})
	}
	return marshalLine(ev)
}

// genGitHub is a push of 40 commits by five authors to a busy repository:
// about 45 KB, as GitHub sends it (compact).
func genGitHub() []byte {
	r := rand.New(rand.NewPCG(20, 26))
	org := account("acme-logistics", 81234567, "Organization")
	authors := []Person{
		{"Jana Novák", "jana.novak@example.org", "jnovak"},
		{"Ravi Subramanian", "ravi@example.com", "ravis"},
		{"Ömer Yıldız", "oemer.yildiz@example.net", "oyildiz"},
		{"Chloé Martin", "chloe.martin@example.fr", "cmartin"},
		{"dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com", "dependabot[bot]"},
	}
	dirs := []string{"cmd/dispatcher", "internal/routing", "internal/billing", "api/v2", "docs", "deploy/helm", "web/src/components", ".github/workflows"}
	files := []string{"main.go", "handler.go", "handler_test.go", "README.md", "values.yaml", "Map.tsx", "ci.yml", "schema.json"}
	verbs := []string{"Fix", "Add", "Refactor", "Update", "Remove", "Document", "Speed up", "Bump"}
	things := []string{"route cache eviction", "invoice rounding for CHF", "retry budget on 429", "helm chart probes",
		"map marker clustering", "golang.org/x/net from 0.30.0 to 0.31.0", "the <Dispatch> & <Return> flows", "tracing of SQS consumers"}
	repo := Repository{
		ID: 612345678, NodeID: "R_kgDOJH" + hexID(r, 4), Name: "fleet-dispatch", FullName: "acme-logistics/fleet-dispatch",
		Private: true, Owner: org, HTMLURL: "https://github.com/acme-logistics/fleet-dispatch",
		Description: "Dispatch and routing for the delivery fleet — APIs, workers and the ops console",
		URL:         "https://github.com/acme-logistics/fleet-dispatch",
		CommitsURL:  "https://api.github.com/repos/acme-logistics/fleet-dispatch/commits{/sha}",
		CompareURL:  "https://api.github.com/repos/acme-logistics/fleet-dispatch/compare/{base}...{head}",
		ContentsURL: "https://api.github.com/repos/acme-logistics/fleet-dispatch/contents/{+path}",
		PullsURL:    "https://api.github.com/repos/acme-logistics/fleet-dispatch/pulls{/number}",
		IssuesURL:   "https://api.github.com/repos/acme-logistics/fleet-dispatch/issues{/number}",
		CreatedAt:   1681299117, UpdatedAt: "2026-11-29T09:12:44Z", PushedAt: 1795962100,
		GitURL: "git://github.com/acme-logistics/fleet-dispatch.git", SSHURL: "git@github.com:acme-logistics/fleet-dispatch.git",
		CloneURL: "https://github.com/acme-logistics/fleet-dispatch.git", Size: 48213, StargazersCount: 37, WatchersCount: 37,
		Language: "Go", HasIssues: true, HasProjects: true, ForksCount: 4, OpenIssuesCount: 61,
		License: &License{Key: "apache-2.0", Name: "Apache License 2.0", SPDXID: "Apache-2.0",
			URL: "https://api.github.com/licenses/apache-2.0", NodeID: "MDc6TGljZW5zZTI="},
		Topics:     []string{"logistics", "routing", "aws-lambda", "go"},
		Visibility: "private", DefaultBranch: "main", MasterBranch: "main", Organization: "acme-logistics",
	}
	ev := PushEvent{
		Ref: "refs/heads/main", Before: hexID(r, 20), Repository: repo,
		Pusher: Person{Name: "jnovak", Email: "jana.novak@example.org"}, Organization: &org,
		Sender: account("jnovak", 5123987, "User"), Installation: &Installation{ID: 44123456, NodeID: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDQxMjM0NTY="},
	}
	t := time.Date(2026, 11, 28, 16, 2, 11, 0, time.FixedZone("", 3600))
	for i := range 40 {
		a := authors[r.IntN(len(authors))]
		sum := sha1.Sum([]byte(hexID(r, 20)))
		id := hex.EncodeToString(sum[:])
		msg := fmt.Sprintf("%s %s\n\n%s\n\nRefs #%d", verbs[r.IntN(len(verbs))], things[r.IntN(len(things))],
			strings.Repeat("The previous behaviour dropped events under load; this keeps them and adds a test. ", 1+r.IntN(3)), 1000+r.IntN(900))
		if a.Username == "dependabot[bot]" {
			msg += "\n\nSigned-off-by: dependabot[bot] <support@github.com>"
		}
		c := Commit{
			ID: id, TreeID: hexID(r, 20), Distinct: true, Message: msg, Timestamp: t.Add(time.Duration(i) * 7 * time.Minute),
			URL: "https://github.com/acme-logistics/fleet-dispatch/commit/" + id, Author: a,
			Committer: Person{Name: "GitHub", Email: "noreply@github.com", Username: "web-flow"},
			Added:     []string{}, Removed: []string{}, Modified: []string{},
		}
		for range 2 + r.IntN(9) {
			f := dirs[r.IntN(len(dirs))] + "/" + files[r.IntN(len(files))]
			switch r.IntN(6) {
			case 0:
				c.Added = append(c.Added, f)
			case 1:
				c.Removed = append(c.Removed, f)
			default:
				c.Modified = append(c.Modified, f)
			}
		}
		ev.Commits = append(ev.Commits, c)
	}
	head := ev.Commits[len(ev.Commits)-1]
	ev.HeadCommit, ev.After = &head, head.ID
	ev.Compare = "https://github.com/acme-logistics/fleet-dispatch/compare/" + ev.Before[:12] + "..." + ev.After[:12]
	return marshalLine(ev)
}

func account(login string, id int64, typ string) Account {
	u := "https://api.github.com/users/" + login
	return Account{
		Login: login, ID: id, NodeID: fmt.Sprintf("MDQ6VXNlcjU%07d", id%10000000),
		AvatarURL: fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", id), URL: u,
		HTMLURL: "https://github.com/" + login, FollowersURL: u + "/followers", ReposURL: u + "/repos",
		EventsURL: u + "/events{/privacy}", ReceivedEventsURL: u + "/received_events", Type: typ,
	}
}

func marshalLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}
