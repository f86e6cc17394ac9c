package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

func batch(t *testing.T) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	raw, err := os.ReadFile("testdata/batch.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// send invokes the function with ev and returns the IDs it reported as
// failed; it is safe to call from any goroutine.
func send(f *lambdatest.Function, ev events.SQSEvent) ([]string, []byte, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, err
	}
	r := f.Invoke(payload)
	if r.Err != nil {
		return nil, nil, r.Err
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(r.Payload, &resp); err != nil {
		return nil, r.Payload, err
	}
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids, r.Payload, nil
}

// TestPartialBatchFailure: of the four messages in testdata/batch.json,
// the malformed one and the one ordering nothing are reported, in batch
// order, and the good ones are not.
func TestPartialBatchFailure(t *testing.T) {
	f := lambdatest.Start(t, handle, lambdatest.WithConcurrency(4))
	ev := batch(t)
	failed, body, err := send(f, ev)
	if err != nil {
		t.Fatalf("%v (%s)", err, body)
	}
	want := []string{ev.Records[1].MessageId, ev.Records[2].MessageId}
	if !slices.Equal(failed, want) {
		t.Fatalf("failed %v, want %v; response %s", failed, want, body)
	}

	// SQS delivers the two failures again, fixed, with a duplicate of a
	// message already taken: nothing fails.
	ev.Records[1].Body = `{"orderId":"o-1002","sku":"GOPHER-MUG","quantity":1}`
	ev.Records[2].Body = `{"orderId":"o-1003","sku":"GOPHER-STICKER","quantity":3}`
	ev.Records = ev.Records[:3]
	for i := range ev.Records {
		ev.Records[i].Attributes["ApproximateReceiveCount"] = "2"
	}
	if failed, body, err = send(f, ev); err != nil || len(failed) != 0 {
		t.Fatalf("redelivery: failed %v, err %v; response %s", failed, err, body)
	}
}

// TestEmptyResponse: a batch with no failure answers an empty list, which
// Lambda reads as "all done".
func TestEmptyResponse(t *testing.T) {
	f := lambdatest.Start(t, handle, lambdatest.WithConcurrency(1))
	ev := batch(t)
	ev.Records = ev.Records[3:]
	_, body, err := send(f, ev)
	if err != nil || string(body) != `{"batchItemFailures":[]}` {
		t.Fatalf("response %s, %v; want {\"batchItemFailures\":[]}", body, err)
	}
}

// TestConcurrentBatches: batches handled at once (N = 4) each report
// exactly their own bad message.
func TestConcurrentBatches(t *testing.T) {
	const n, batches = 4, 24
	f := lambdatest.Start(t, handle, lambdatest.WithConcurrency(n))
	template := batch(t).Records[0]
	evs := make([]events.SQSEvent, batches)
	for b := range evs {
		for i := range 5 {
			m := template
			m.MessageId = fmt.Sprintf("msg-%d-%d", b, i)
			m.Body = fmt.Sprintf(`{"orderId":"c-%d-%d","sku":"GOPHER-PIN","quantity":%d}`, b, i, i)
			evs[b].Records = append(evs[b].Records, m) // quantity 0: message i = 0 fails
		}
	}
	var wg sync.WaitGroup
	for b, ev := range evs {
		wg.Go(func() {
			failed, body, err := send(f, ev)
			if want := []string{fmt.Sprintf("msg-%d-0", b)}; err != nil || !slices.Equal(failed, want) {
				t.Errorf("batch %d: failed %v, err %v, want %v; response %s", b, failed, err, want, body)
			}
		})
	}
	wg.Wait()
}

// TestIsolation: each batch reports the same failures served alone or
// beside the others.
func TestIsolation(t *testing.T) {
	template := batch(t).Records[0]
	batches := make([][]byte, 16)
	for b := range batches {
		var ev events.SQSEvent
		for i := range 3 {
			m := template
			m.MessageId = fmt.Sprintf("msg-%d-%d", b, i)
			m.Body = fmt.Sprintf(`{"orderId":"i-%d-%d","sku":"GOPHER-PIN","quantity":%d}`, b, i, (b+i)%3)
			ev.Records = append(ev.Records, m)
		}
		var err error
		if batches[b], err = json.Marshal(ev); err != nil {
			t.Fatal(err)
		}
	}
	lambdatest.CheckIsolation(t, handle, batches)
}
