package main

import (
	"testing"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

func TestMain(m *testing.M) {
	lambdatest.VerifyTestMain(m)
}
