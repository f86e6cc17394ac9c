//go:build codec_sonic

package main

import _ "github.com/lmigo/lmigo/concurrent/codec/sonic"
