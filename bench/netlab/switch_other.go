//go:build !linux

package main

import (
	"context"
	"errors"
)

var errLinux = errors.New("the lab's switch needs Linux (network namespaces, TAP devices)")

func runSwitch(context.Context, []string) error { return errLinux }

func runControl([]string) error { return errLinux }
