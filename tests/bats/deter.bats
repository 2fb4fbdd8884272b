#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The deter command's front end: help, version, dispatch, usage errors.

bats_require_minimum_version 1.5.0
load test_helper

@test "deter --help lists every command and exits 0" {
	run "$DETER" --help
	assert_status 0
	for cmd in record ls show replay version help; do
		[[ "$output" == *"  $cmd "* ]]
	done
}

@test "deter with no arguments is a usage error" {
	run --separate-stderr "$DETER"
	assert_status 2
	[ "$stderr" = "deter: no command given
Try 'deter --help'." ]
}

@test "deter --version prints the version and the log format" {
	run "$DETER" --version
	assert_status 0
	[[ "$output" =~ ^deter\ [0-9]+\.[0-9]+\.[0-9]+\ \(log\ format\ 18,\ zstd\ [0-9.]+\)$ ]]
}

@test "deter version equals deter --version" {
	run "$DETER" version
	assert_status 0
	version=$output
	run "$DETER" --version
	assert_output "$version"
}

@test "an unknown option is a usage error naming it" {
	run --separate-stderr "$DETER" --bogus
	assert_status 2
	[ "$stderr" = "deter: unknown option '--bogus'
Try 'deter --help'." ]
}

@test "every command says an unknown option or a missing argument alike, exit 2" {
	for cmd in record ls show compact index replay version help; do
		run --separate-stderr "$DETER" $cmd --bogus
		assert_status 2
		[ "$stderr" = "deter $cmd: unknown option '--bogus'
Try 'deter $cmd --help'." ]
		run --separate-stderr "$DETER" $cmd -x
		assert_status 2
		[ "$stderr" = "deter $cmd: unknown option '-x'
Try 'deter $cmd --help'." ]
		run --separate-stderr "$DETER" $cmd --help=1
		assert_status 2
		[ "$stderr" = "deter $cmd: option '--help' takes no argument
Try 'deter $cmd --help'." ]
		run --separate-stderr "$DETER" $cmd --help
		assert_status 0
		[ -z "$stderr" ]
		[[ "$output" == "usage: deter $cmd"* ]]
	done
	for cmd in record ls show compact index replay; do
		run --separate-stderr "$DETER" $cmd -d
		[ "$cmd" != record ] || run --separate-stderr "$DETER" $cmd -o
		assert_status 2
		[[ "$stderr" == "deter $cmd: option '-"[do]"' needs an argument
Try 'deter $cmd --help'." ]]
	done
}

@test "an unknown command is a usage error naming it" {
	run --separate-stderr "$DETER" frobnicate
	assert_status 2
	[ "$stderr" = "deter: unknown command 'frobnicate'
Try 'deter --help'." ]
}

@test "deter help COMMAND prints that command's usage" {
	run "$DETER" help version
	assert_status 0
	[[ "${lines[0]}" == "usage: deter version" ]]
}

@test "deter help with an unknown command is a usage error" {
	run --separate-stderr "$DETER" help nosuch
	assert_status 2
	[ "$stderr" = "deter help: unknown command 'nosuch'
Try 'deter help --help'." ]
}

@test "deter version with an argument is a usage error" {
	run --separate-stderr "$DETER" version extra
	assert_status 2
	[ "$stderr" = "deter version: unexpected argument 'extra'
Try 'deter version --help'." ]
}
