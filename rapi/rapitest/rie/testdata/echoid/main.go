// Command echoid is a test-only bootstrap written on package rapi alone,
// one invocation at a time. For each invocation it first posts an answer
// whose Lambda-Runtime-Invocation-Id names another invocation, by the
// route the payload asks for ({"route":"response"} or {"route":"error"}),
// then the right answer, which reports what the wrong one got:
//
//	{"invocationId":"...","wrongStatus":410,"wrongErr":"...","payload":{...}}
//
// wrongStatus is the status of the refused post (0 when it was not a
// *rapi.StatusError, then wrongErr says what it was).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/lmigo/lmigo/rapi"
)

type report struct {
	InvocationID string          `json:"invocationId"`
	WrongStatus  int             `json:"wrongStatus"`
	WrongErr     string          `json:"wrongErr,omitempty"`
	Payload      json.RawMessage `json:"payload"`
}

func main() {
	client, err := rapi.New(os.Getenv("AWS_LAMBDA_RUNTIME_API"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoid:", err)
		os.Exit(1)
	}
	conn := client.Conn()
	ctx := context.Background()
	var inv rapi.Invocation
	for {
		if err := conn.Next(ctx, &inv); err != nil {
			fmt.Fprintln(os.Stderr, "echoid: next:", err)
			os.Exit(1)
		}
		var c struct{ Route string }
		_ = json.Unmarshal(inv.Payload, &c)

		wrong := inv
		wrong.InvocationID = "not-" + inv.InvocationID
		if c.Route == "error" {
			err = conn.Fail(ctx, &wrong, "EchoID.Wrong", []byte(`{"errorMessage":"wrong echo","errorType":"EchoID.Wrong"}`), nil, false)
		} else {
			err = conn.Respond(ctx, &wrong, []byte(`"wrong echo"`), "application/json", false)
		}
		rep := report{InvocationID: inv.InvocationID, Payload: json.RawMessage(inv.Payload)}
		var se *rapi.StatusError
		if errors.As(err, &se) {
			rep.WrongStatus = se.Code
		} else {
			rep.WrongErr = fmt.Sprint(err)
		}
		body, _ := json.Marshal(rep)
		if err := conn.Respond(ctx, &inv, body, "application/json", false); err != nil {
			fmt.Fprintln(os.Stderr, "echoid: respond:", err)
		}
	}
}
