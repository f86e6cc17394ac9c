package main

import (
	"errors"
	"fmt"
	"regexp"

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

// useEvents sets c's workload to the user's events: those of -events, or
// without it the empty event {}, each answer checked by -expect or else
// as eventItems says.
func (c *config) useEvents() error {
	var expect *regexp.Regexp
	if c.Expect != "" {
		re, err := regexp.Compile(c.Expect)
		if err != nil {
			return fmt.Errorf("-expect: %w", err)
		}
		expect = re
	}
	var evs []load.Event
	if c.Events != "" {
		var err error
		if evs, err = load.ReadEvents(c.Events); err != nil {
			return inputError("-events", c.Events, err)
		}
	}
	c.Workload = load.EventsWorkload
	c.userItems, c.eventsDesc = load.UserEvents(c.Events, evs, c.Shuffle, expect)
	return nil
}
