package main

import (
	"errors"

	"github.com/lmigo/lmigo/loadtest/load"
)

// workload is the workload named so: the user's events, or one of
// parseWorkload's.
func (c *config) workload(name string) (load.Workload, error) {
	if name == load.EventsWorkload {
		if len(c.userItems) == 0 {
			return load.Workload{}, errors.New("workload events: no events (-events FILE)")
		}
		return load.Workload{Name: name, Items: c.userItems}, nil
	}
	return load.ParseWorkload(name)
}
