package rapitest

import (
	"encoding/json"
	"io"
	"net/http"
)

// The Extensions API, for internal extensions, as the emulator serves it. A
// runtime registers one (with no events) to be sent SIGTERM before shutdown.
// Then it calls event/next once. The platform counts that as "ready", and
// never answers it for an extension without events.
const (
	pathExtRegister  = "/2020-01-01/extension/register"
	pathExtEventNext = "/2020-01-01/extension/event/next"
	hdrExtName       = "Lambda-Extension-Name"
	hdrExtID         = "Lambda-Extension-Identifier"
)

var (
	bodyExtNoName    = []byte(`{"errorMessage":"Empty extension name","errorType":"Extension.InvalidExtensionName"}`)
	bodyExtBadBody   = []byte(`{"errorMessage":"Invalid Register request format","errorType":"InvalidRequestFormat"}`)
	bodyExtEvents    = []byte(`{"errorMessage":"No events allowed for internal extensions","errorType":"Extension.InvalidEventType"}`)
	bodyExtClosed    = []byte(`{"errorMessage":"Extension registration closed already","errorType":"Extension.RegistrationClosed"}`)
	bodyExtDuplicate = []byte(`{"errorMessage":"Extension with this name already registered","errorType":"Extension.InvalidState"}`)
	bodyExtUnknown   = []byte(`{"errorMessage":"Unknown extension","errorType":"Extension.UnknownExtensionIdentifier"}`)
)

// handleExtRegister registers an internal extension. Registration closes
// with init, at the runtime's first /next, as on the platform.
func (s *Server) handleExtRegister(w http.ResponseWriter, r *http.Request) {
	name := r.Header.Get(hdrExtName)
	body, over, err := readBody(r, 64<<10)
	var req struct {
		Events []string `json:"events"`
	}
	switch {
	case name == "":
		s.refuseExt(w, bodyExtNoName)
		return
	case err != nil || over || json.Unmarshal(body, &req) != nil:
		s.refuseExt(w, bodyExtBadBody)
		return
	case len(req.Events) > 0:
		s.refuseExt(w, bodyExtEvents)
		return
	case s.c.polls.Load() > 0:
		s.refuseExt(w, bodyExtClosed)
		return
	}
	s.mu.Lock()
	if s.extensions == nil {
		s.extensions = map[string]string{}
	}
	for _, n := range s.extensions {
		if n == name {
			s.mu.Unlock()
			s.refuseExt(w, bodyExtDuplicate)
			return
		}
	}
	id := formatID(s.ids.invocation, 1<<47+uint64(len(s.extensions)))
	s.extensions[id] = name
	s.mu.Unlock()
	s.c.extensions.Add(1)
	w.Header().Set(hdrExtID, id)
	doc, _ := json.Marshal(struct {
		FunctionName    string `json:"functionName"`
		FunctionVersion string `json:"functionVersion"`
		Handler         string `json:"handler"`
	}{"lmigo-fake", "$LATEST", ""})
	reply(w, http.StatusOK, doc)
}

// refuseExt answers an Extensions API request 403 with body, counted in
// ExtRefused.
func (s *Server) refuseExt(w http.ResponseWriter, body []byte) {
	s.c.extRefused.Add(1)
	reply(w, http.StatusForbidden, body)
}

// handleExtNext holds an internal extension's event poll open: there is no
// event for it. It returns when the client goes away or the server closes.
func (s *Server) handleExtNext(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	_, ok := s.extensions[r.Header.Get(hdrExtID)]
	s.mu.Unlock()
	if !ok {
		s.refuseExt(w, bodyExtUnknown)
		return
	}
	s.c.extPolls.Add(1)
	select {
	case <-r.Context().Done():
	case <-s.closed:
	}
	_, _ = io.Copy(io.Discard, r.Body)
}
