# Switchboard — two commands on a fresh Debian machine: `make run` and `make test`.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
FUZZ_SECONDS ?= 10
# The interop suite runs on this many pytest-xdist workers. Its files that keep real-time media flowing form two
# groups, browsers and other peers, each run one file after another on one worker, beside each other and beside the
# files that mostly wait (Tests/interop/conftest.py, whose scheduler makes the groups): two browsers encoding at once
# on 2 cores starve each other, a browser beside aiortc peers or a back-off timer does not. Most of the suite waits on
# real time (about 40 % of 2 cores busy with three workers), but a fourth, which takes it from ~11.3 to ~9.6 minutes,
# loads the media groups past what their checks allow: a clean clone's run failed three of them (a Janus load
# test's packet rate, a simulcast layer switch, a websocket bot's audio order).
INTEROP_WORKERS ?= 3
# scripts/test runs the stages, and what can run beside them (its header says what and why).
TESTS := INTEROP_WORKERS=$(INTEROP_WORKERS) FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/test

.PHONY: run build release test unit interop fuzz bench setup setup-test setup-bench clean sanitize faults soak

setup:
	@scripts/setup

setup-test:
	@scripts/setup --test

setup-bench:
	@scripts/setup --bench

build: setup
	swift build

release: setup
	swift build -c release

run: release
	.build/release/switchboard serve --dev

unit:
	@$(TESTS) unit

interop:
	@$(TESTS) interop

test:
	@$(TESTS)

fuzz: setup-test
	scripts/fuzz 300

# Swift tests under ASan (+UBSan on the C shim) and TSan, then the interop suite against the ASan server;
# each in its own scratch path (.build-asan, .build-tsan). See scripts/sanitize and docs/reliability.md.
sanitize: setup-test
	scripts/sanitize

# The whole fault matrix, including the slow tests `make test` skips.
faults: setup-test release
	FAULTS_SLOW=1 .venv/bin/python -m pytest -q Tests/interop/faults

SOAK_MINUTES ?= 30
soak: setup-test release
	scripts/soak --minutes $(SOAK_MINUTES)

# Every benchmark; scripts/bench rewrites its own section of docs/benchmarks.md, the others print the
# tables their sections record (one at a time: BENCH=video make bench runs scripts/bench-video only).
BENCH ?= all
bench: setup-bench release
	@if [ "$(BENCH)" = all ]; then \
	  scripts/bench && scripts/bench-jwt && scripts/bench-realtime && scripts/bench-media && scripts/bench-rooms \
	    && scripts/bench-video && scripts/bench-audio && scripts/bench-mixer && scripts/bench-sip && scripts/bench-sip-tls \
	    && scripts/bench-calls && scripts/bench-bridged && scripts/bench-peers && scripts/bench-archive && scripts/bench-hls-latency \
	    && scripts/bench-captions && scripts/bench-render; \
	else scripts/bench-$(BENCH); fi

clean:
	rm -rf .build .fuzz-build .build-asan .build-tsan .build-sanitize
