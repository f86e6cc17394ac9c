//go:build race

package lambdatest_test

const raceEnabled = true
