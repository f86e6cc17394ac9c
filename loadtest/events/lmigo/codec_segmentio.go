//go:build codec_segmentio

package main

import _ "github.com/lmigo/lmigo/concurrent/codec/segmentio"
