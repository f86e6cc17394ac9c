package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/examples/internal/fakelambda"
	"github.com/lmigo/lmigo/rapi/rapitest"
)

func batch(t *testing.T) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal(fakelambda.ReadFile(t, "testdata/batch.json"), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// send invokes the function with ev and returns the IDs it reported as
// failed; it is safe to call from any goroutine.
func send(ctx context.Context, api *rapitest.Server, ev events.SQSEvent) ([]string, []byte, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := api.Invoke(ctx, rapitest.Request{Payload: payload})
	if err != nil {
		return nil, nil, err
	}
	if r.Err != nil {
		return nil, r.Body, r.Err
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(r.Body, &resp); err != nil {
		return nil, r.Body, err
	}
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids, r.Body, nil
}

// TestPartialBatchFailure: of the four messages in testdata/batch.json,
// the malformed one and the one ordering nothing are reported, in batch
// order, and the good ones are not.
func TestPartialBatchFailure(t *testing.T) {
	api := fakelambda.Serve(t, handle, 4)
	ev := batch(t)
	failed, body, err := send(t.Context(), api, ev)
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
	if failed, body, err = send(t.Context(), api, ev); err != nil || len(failed) != 0 {
		t.Fatalf("redelivery: failed %v, err %v; response %s", failed, err, body)
	}
}

// TestEmptyResponse: a batch with no failure answers an empty list, which
// Lambda reads as "all done".
func TestEmptyResponse(t *testing.T) {
	api := fakelambda.Serve(t, handle, 1)
	ev := batch(t)
	ev.Records = ev.Records[3:]
	_, body, err := send(t.Context(), api, ev)
	if err != nil || string(body) != `{"batchItemFailures":[]}` {
		t.Fatalf("response %s, %v; want {\"batchItemFailures\":[]}", body, err)
	}
}

// TestConcurrentBatches: batches handled at once (N = 4) each report
// exactly their own bad message.
func TestConcurrentBatches(t *testing.T) {
	const n, batches = 4, 24
	api := fakelambda.Serve(t, handle, n)
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
			failed, body, err := send(t.Context(), api, ev)
			if want := []string{fmt.Sprintf("msg-%d-0", b)}; err != nil || !slices.Equal(failed, want) {
				t.Errorf("batch %d: failed %v, err %v, want %v; response %s", b, failed, err, want, body)
			}
		})
	}
	wg.Wait()
	if st := api.Stats(); st.Responses != batches || st.MaxOutstanding > n {
		t.Fatalf("responses %d, max polls+in flight %d; want %d, <= %d", st.Responses, st.MaxOutstanding, batches, n)
	}
}
