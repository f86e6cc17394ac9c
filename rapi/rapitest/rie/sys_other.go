//go:build !linux

package rie

import (
	"io/fs"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func supported() error { return ErrUnsupported }

func statUID(fs.FileInfo) int { return -1 }

func killGroup(int, syscall.Signal) error { return ErrUnsupported }

func killPID(int, syscall.Signal) error { return ErrUnsupported }
