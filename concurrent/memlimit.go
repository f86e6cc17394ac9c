package concurrent

import (
	"go.uber.org/zap"
)

// derivedMemoryLimit is the soft memory limit the runtime sets from the
// function's memory size. It is 0 when it sets none. That is when the user
// set GOMEMLIMIT (the Go runtime has read it already), the memory size is
// unknown, or LMIGO_MEMORY_LIMIT_FRACTION is off.
func (rt *Runtime) derivedMemoryLimit() int64 {
	c := rt.cfg
	if c.GOMEMLIMITSet || c.MemoryMB <= 0 || c.MemoryLimitFraction <= 0 {
		return 0
	}
	// MemoryMB <= 1<<20, so MemoryMB<<20 <= 1<<40: exact in a float64.
	return int64(float64(int64(c.MemoryMB)<<20) * c.MemoryLimitFraction)
}

// applyMemoryLimit sets the derived limit, once, at the start of Run.
func (rt *Runtime) applyMemoryLimit() {
	limit := rt.derivedMemoryLimit()
	if limit <= 0 {
		return
	}
	rt.setMemoryLimit(limit)
	rt.log.Debug("memory limit set",
		zap.Int64("memoryLimitBytes", limit),
		zap.Int("functionMemoryMB", rt.cfg.MemoryMB),
		zap.Float64("fraction", rt.cfg.MemoryLimitFraction))
}
