package measure

import (
	"sync"
	"time"
)

// Sample is the resident memory of the sampled processes at one moment.
type Sample struct {
	At  time.Duration `json:"at"`  // since the Sampler's t0
	RSS int64         `json:"rss"` // bytes, summed over the processes
}

// Sampler reads the RSS of a set of processes at a fixed interval.
type Sampler struct {
	pids  func() []int
	every time.Duration
	t0    time.Time

	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	out  []Sample
}

// NewSampler starts sampling at once and then every interval; pids is
// called at every sample (from the Sampler's goroutine), and times are
// measured from t0. A sample in which no process could be read is skipped.
func NewSampler(pids func() []int, every time.Duration, t0 time.Time) *Sampler {
	s := &Sampler{pids: pids, every: every, t0: t0, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-t.C:
		case <-s.stop:
			return
		}
	}
}

func (s *Sampler) sample() {
	var rss int64
	var ok bool
	for _, pid := range s.pids() {
		st, err := ReadStatus(pid)
		if err != nil {
			continue
		}
		rss += st.RSS
		ok = true
	}
	if !ok {
		return
	}
	s.mu.Lock()
	s.out = append(s.out, Sample{At: time.Since(s.t0), RSS: rss})
	s.mu.Unlock()
}

// Every is the sampling interval.
func (s *Sampler) Every() time.Duration { return s.every }

// Stop takes a last sample, ends the goroutine and returns all samples. It
// must be called exactly once.
func (s *Sampler) Stop() []Sample {
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out
}
