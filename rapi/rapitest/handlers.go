package rapitest

import (
	"io"
	"net/http"
	"net/textproto"
	"strconv"
)

// Routes and headers of the Runtime API.
const (
	pathNext       = "/2018-06-01/runtime/invocation/next"
	pathInvocation = "/2018-06-01/runtime/invocation/"
	pathInitError  = "/2018-06-01/runtime/init/error"

	hdrRequestID       = "Lambda-Runtime-Aws-Request-Id"
	hdrDeadline        = "Lambda-Runtime-Deadline-Ms"
	hdrFunctionARN     = "Lambda-Runtime-Invoked-Function-Arn"
	hdrTraceID         = "Lambda-Runtime-Trace-Id"
	hdrClientContext   = "Lambda-Runtime-Client-Context"
	hdrCognitoIdentity = "Lambda-Runtime-Cognito-Identity"
	hdrTenantID        = "Lambda-Runtime-Aws-Tenant-Id"
	hdrInvocationID    = "Lambda-Runtime-Invocation-Id"
	hdrErrorType       = "Lambda-Runtime-Function-Error-Type"
	hdrXRayErrorCause  = "Lambda-Runtime-Function-Xray-Error-Cause"
	hdrContentType     = "Content-Type"
	hdrContentLength   = "Content-Length"

	contentTypeJSON = "application/json"
)

// Reply bodies, shaped like the emulator's.
var (
	bodyAccepted   = []byte(`{"status":"OK"}`)
	bodyInvalidID  = []byte(`{"errorMessage":"Invalid request ID","errorType":"InvalidRequestID"}`)
	bodyTimeout    = []byte(`{"errorMessage":"Invoke timeout","errorType":"InvokeTimeout"}`)
	bodyTooLarge   = []byte(`{"errorMessage":"Exceeded maximum allowed payload size.","errorType":"RequestEntityTooLarge"}`)
	bodyTruncated  = []byte(`{"errorMessage":"HTTP request detected as truncated","errorType":"TruncatedHTTPRequest"}`)
	bodyClosed     = []byte(`{"errorMessage":"Internal Server Error","errorType":"InternalServerError"}`)
	bodyFault      = []byte(`{"errorMessage":"Fault injected by the test","errorType":"InjectedFault"}`)
	errTooLarge    = []byte(`{"errorMessage":"Response payload size exceeded maximum allowed payload size.","errorType":"Function.ResponseSizeTooLarge"}`)
	errTruncated   = []byte(`{"errorMessage":"Runtime response was truncated","errorType":"Runtime.TruncatedResponse"}`)
	valContentType = []string{contentTypeJSON} // shared, read only
)

func (s *Server) handleNext(w http.ResponseWriter, r *http.Request) {
	if s.isClosed() {
		reply(w, http.StatusInternalServerError, bodyClosed)
		return
	}
	s.c.polls.Add(1)
	p := pollPool.Get().(*poll)
	p.state.Store(pollWaiting)
	raiseTo(&s.c.maxPending, s.c.pending.Add(1))
	o := s.c.outstanding.Add(1)
	if o > int64(s.opts.MaxConcurrency) && s.expire() {
		// An invocation past its deadline is over on the platform, even
		// before the timer that ends its Invoke has fired.
		o = s.c.outstanding.Load()
	}
	raiseTo(&s.c.maxOutstanding, o)
	if o > int64(s.opts.MaxConcurrency) {
		s.c.violations.Add(1)
	}

	// The poll stays registered even if its client goes away, as on the
	// platform, so r.Context() is not watched.
	select {
	case s.pollq <- p:
	case <-s.closed:
		s.c.pending.Add(-1)
		s.c.outstanding.Add(-1)
		reply(w, http.StatusInternalServerError, bodyClosed)
		return
	}
	select {
	case s.pollSig <- struct{}{}:
	default:
	}

	var inv *invocation
	select {
	case inv = <-p.ch:
	case <-s.closed:
		if p.state.CompareAndSwap(pollWaiting, pollCanceled) {
			// p stays in pollq, so it is not reused.
			s.c.pending.Add(-1)
			s.c.outstanding.Add(-1)
			reply(w, http.StatusInternalServerError, bodyClosed)
			return
		}
		inv = <-p.ch // claimed just before: Invoke sends at once
	}
	pollPool.Put(p)
	if inv.unanswerable {
		s.release(inv) // the runtime cannot post for it: its slot is free
	}
	if rec, ok := w.(*recorder); ok {
		rec.inv = inv // a fault given by call index will cut this reply
	}
	if f := inv.req.Fault; f != nil {
		// The reply is made first, so that Invoke does not wait for the
		// fault's stall to have its Payload back.
		rec := newRecorder()
		_ = s.writeInvocation(rec, inv) // a recorder never fails
		if !f.carries(rec.bytes(), inv.id) {
			inv.undelivered.Store(true) // before Invoke may return
			s.release(inv)
		}
		inv.written.Done()
		s.inject(w, r, f, rec.writeTo)
		return
	}
	inv.beginWrite(w)
	inv.endWrite(s.writeInvocation(w, inv))
}

// writeInvocation writes the /next reply for inv and returns the error of
// writing its payload.
func (s *Server) writeInvocation(w http.ResponseWriter, inv *invocation) error {
	req := inv.req
	h := w.Header()
	v := make([]string, 10) // one allocation for every header value
	n := 0
	set := func(k, val string) {
		v[n] = val
		h[k] = v[n : n+1 : n+1]
		n++
	}
	set(hdrRequestID, inv.id)
	set(hdrDeadline, deadlineMs(inv.deadline))
	set(hdrFunctionARN, s.opts.FunctionARN)
	set(hdrTraceID, inv.traceID)
	set(hdrInvocationID, inv.invocationID)
	set(hdrContentType, contentTypeJSON)
	set(hdrContentLength, strconv.Itoa(len(req.Payload)))
	if req.ClientContext != "" {
		set(hdrClientContext, req.ClientContext)
	}
	if req.CognitoIdentity != "" {
		set(hdrCognitoIdentity, req.CognitoIdentity)
	}
	if req.TenantID != "" {
		set(hdrTenantID, req.TenantID)
	}
	for k, val := range req.Headers {
		k = textproto.CanonicalMIMEHeaderKey(k)
		if val == "" {
			delete(h, k)
		} else {
			h[k] = []string{val}
		}
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(req.Payload) // a dead client loses the invocation, as on the platform
	return err
}

func (s *Server) handleResponse(w http.ResponseWriter, r *http.Request) {
	s.handlePost(w, r, false)
}

func (s *Server) handleError(w http.ResponseWriter, r *http.Request) {
	s.handlePost(w, r, true)
}

// handlePost ends the invocation named in the path with the runtime's
// /response or /error, or says why it cannot.
func (s *Server) handlePost(w http.ResponseWriter, r *http.Request, isError bool) {
	limit := s.opts.MaxResponseBytes
	if isError {
		limit = MaxErrorBodyBytes
	}
	body, over, rerr := readBody(r, limit)
	end := s.opts.now()
	if over && isError && rerr == nil {
		// The invocation stays open: the runtime may post a smaller error.
		s.c.tooLarge.Add(1)
		reply(w, http.StatusRequestEntityTooLarge, bodyTooLarge)
		return
	}

	id := r.PathValue("id")
	if v, ok := s.inflight.Load(id); ok && !s.echoMatches(v.(*invocation), r) {
		// As the emulator: refused as if timed out, and the invocation
		// stays open for the answer that names it.
		s.c.crossWired.Add(1)
		s.notice(id, NoticeCrossWired)
		reply(w, http.StatusGone, bodyTimeout)
		return
	}
	v, ok := s.inflight.LoadAndDelete(id)
	if !ok {
		s.c.badRequests.Add(1)
		if seq, ok := parseID(s.ids.request, id); ok && seq != 0 && seq <= s.seq.Load() {
			s.c.duplicates.Add(1)
			s.notice(id, NoticeDuplicate)
		} else {
			s.c.unknown.Add(1)
			s.notice(id, NoticeUnknown)
		}
		reply(w, http.StatusBadRequest, bodyInvalidID)
		return
	}
	inv := v.(*invocation)
	if !end.Before(inv.deadline) {
		s.timeOut(inv) // the deadline decides, not Invoke's timer, which may run late
	}
	if !inv.state.CompareAndSwap(stateAssigned, stateAnswered) {
		// Ended by its deadline (its slot freed then) or its caller (the
		// runtime's slot is free now).
		s.release(inv)
		if inv.state.Load() == stateTimedOut {
			s.c.late.Add(1)
			s.notice(id, NoticeLate)
			reply(w, http.StatusGone, bodyTimeout)
			return
		}
		s.c.badRequests.Add(1)
		reply(w, http.StatusBadRequest, bodyInvalidID)
		return
	}

	res := Result{RequestID: inv.id, Status: http.StatusOK, Latency: end.Sub(inv.start)}
	mode, modeOK := responseMode(r)
	modeOK = modeOK || isError
	status, rbody := http.StatusAccepted, bodyAccepted
	switch {
	case rerr != nil:
		s.c.truncated.Add(1)
		s.c.badRequests.Add(1)
		res.Err = &FunctionError{Type: ErrorTypeTruncated, Body: append([]byte(nil), errTruncated...)}
		status, rbody = http.StatusBadRequest, bodyTruncated
	case over:
		s.c.oversized.Add(1)
		s.c.tooLarge.Add(1)
		res.Err = &FunctionError{Type: ErrorTypeTooLarge, Body: append([]byte(nil), errTooLarge...)}
		status, rbody = http.StatusRequestEntityTooLarge, bodyTooLarge
	case !modeOK:
		s.c.errors.Add(1)
		s.c.badRequests.Add(1)
		res.Err = &FunctionError{Type: ErrorTypeInvalidResponseMode, Body: append([]byte(nil), errInvalidMode...)}
		status, rbody = http.StatusBadRequest, bodyInvalidMode
	case isError:
		s.c.errors.Add(1)
		res.Err = &FunctionError{Type: r.Header.Get(hdrErrorType), Body: body}
		if c, ok := r.Header[hdrXRayErrorCause]; ok && len(c) > 0 {
			res.Err.Cause = []byte(c[0])
		}
	default:
		res.Body = body
		res.ContentType = r.Header.Get(hdrContentType)
		res.ResponseMode = mode
		if res.Err = trailerError(r); res.Err != nil { // see stream.go
			s.c.errors.Add(1)
		} else {
			s.c.responses.Add(1)
		}
	}
	fault := inv.req.PostFault // read before Invoke may return
	// Released before the result is delivered, so the Stats a caller reads
	// once Invoke returns already count the slot as free. The runtime's next
	// poll is only read after this handler returns anyway.
	s.release(inv)
	inv.done <- res // cap 1, and only the CAS winner sends
	if fault != nil {
		s.inject(w, r, fault, func(w http.ResponseWriter) { reply(w, status, rbody) })
		return
	}
	reply(w, status, rbody)
}

// echoMatches reports whether post r may answer inv by its
// Lambda-Runtime-Invocation-Id. When present (even empty), it must equal the
// ID inv was handed out with. When absent, the post is accepted, as by the
// emulator, and counted.
func (s *Server) echoMatches(inv *invocation, r *http.Request) bool {
	if inv.invocationID == "" {
		return true // handed out without one: nothing to echo
	}
	echo, present := r.Header[hdrInvocationID]
	if !present {
		s.c.noEcho.Add(1)
		s.notice(inv.id, NoticeNoEcho)
		return true
	}
	return len(echo) > 0 && echo[0] == inv.invocationID
}

// notice tells Options.Notice, if set, about a post for id.
func (s *Server) notice(id, what string) {
	if fn := s.opts.Notice; fn != nil {
		fn(id, what)
	}
}

func (s *Server) handleInitError(w http.ResponseWriter, r *http.Request) {
	body, over, err := readBody(r, MaxErrorBodyBytes)
	switch {
	case err != nil:
		s.c.badRequests.Add(1)
		reply(w, http.StatusBadRequest, bodyTruncated)
		return
	case over:
		s.c.tooLarge.Add(1)
		reply(w, http.StatusRequestEntityTooLarge, bodyTooLarge)
		return
	}
	s.mu.Lock()
	s.initErr.typ, s.initErr.body, s.initErr.ok = r.Header.Get(hdrErrorType), body, true
	s.mu.Unlock()
	s.c.initErrors.Add(1)
	reply(w, http.StatusAccepted, bodyAccepted)
}

// readBody reads r's body into a new slice if it is at most limit bytes.
// It never reads more than limit+1 bytes; over reports a larger body.
func readBody(r *http.Request, limit int) (body []byte, over bool, err error) {
	switch {
	case r.ContentLength > int64(limit):
		// Read as far as the limit, as the platform does, before refusing. A
		// runtime then gets its 413 rather than a reset while writing, and a
		// body slightly too large leaves the connection usable.
		if _, err := io.CopyN(io.Discard, r.Body, int64(limit)+1); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	case r.ContentLength >= 0:
		body = make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, false, err
		}
		return body, false, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return nil, false, err
	}
	if len(body) > limit {
		return nil, true, nil
	}
	return body, false, nil
}
