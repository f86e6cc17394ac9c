# lmigo: the front door. `make run` and `make test` are the README's first commands.
GO        ?= go
GOBIN     := $(shell $(GO) env GOPATH)/bin
RIE_MOD   := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
RIE_VER   := v0.0.0-20261030222936-bef5c4ba774d
LINT_VER  := v2.15.0
BENCHSTAT_VER := v0.0.0-20260908200009-22c9c6c9d4da
BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w' -buildvcs=false
BENCH_COUNT ?= 6
# The runtime's module and the modules beside it, each with its own go.mod
# (heavy tooling stays out of what a bootstrap requires). Each JSON codec is
# a module, so that its library is required only by a bootstrap that
# imports it; codectest tests them against each other. OpenTelemetry
# tracing (concurrent/oteltrace) is one too, so that only a bootstrap that
# traces requires OpenTelemetry.
CODECS    := $(addprefix concurrent/codec/,sonic goccy segmentio jsonv2)
CODECTEST := concurrent/codec/codectest
MODULES   := . loadtest deploy examples $(CODECS) $(CODECTEST) concurrent/oteltrace concurrent/lambdahttp/compare

.PHONY: run test build bench bench-all lint tidy help tools rie fmt vet loadtest loadtest-belowsat clean docs-check
.PHONY: package test-arm64
.PHONY: fuzz soak download subjects

## run: build the reference bootstrap, serve it from a local Runtime API, send a short load, report
run:
	$(GO) -C loadtest run . run

## loadtest: lmigo and aws-lambda-go side by side, the standard set (a few minutes); reports in loadtest/out (LOADTEST_FLAGS adds flags)
loadtest:
	$(GO) -C loadtest run . compare $(LOADTEST_FLAGS)

## loadtest-belowsat: the below-saturation half of the standard set: open model, I/O-bound handlers, grown stacks, with their targets against the floor and the scheduler's share (LOADTEST_FLAGS adds flags)
loadtest-belowsat:
	$(GO) -C loadtest run . compare -set belowsat $(LOADTEST_FLAGS)

# T0 is when make started, so that test can say how long it took, vet included.
T0 := $(shell date +%s)
SINCE_T0 = $$(( $$(date +%s) - $(T0) ))s

## test: vet, format check, the race-enabled, shuffled test suite of every module (needs the emulator: make rie), then the allocation gates without -race; each step says where it is, the end how long it took (5 min on a quiet 2-vCPU VM, 15 under load)
test: rie vet
	@echo "== test: gofmt ($(SINCE_T0))"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	@set -e; for m in $(MODULES); do echo "== test: module $$m ($(SINCE_T0))"; \
	  (cd $$m && PATH="$(GOBIN):$$PATH" $(GO) test -race -shuffle=on -timeout 10m ./...); done
	@# The allocation and copy gates skip under -race (it allocates), and so does the parked stack bound (it grows frames): run them without.
	@echo "== test: allocation gates, without -race ($(SINCE_T0))"
	$(GO) test -count=1 -run='Alloc|Copies|KeepsPayload|BufferReused|ParkedSlotStack' ./concurrent/... ./rapi/... ./pool/...
	$(GO) -C $(CODECTEST) test -count=1 -run='Alloc' ./...
	@t=$$(( $$(date +%s) - $(T0) )); echo "== test: passed in $$((t / 60))m$$((t % 60))s"

## docs-check: every go and make command of the docs parses as written, every link resolves, and the README's function is moved, tested and packed in a new module as the README says (part of make test)
docs-check:
	$(GO) test -count=1 -run 'TestDocsCommands|TestDocCheckerRejects|TestDocsLinks|TestNewUserModule' ./cmd/bootstrap/

## download: the Go modules every module of the repository needs, into the module cache
download:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) mod download); done

vet:
	@set -e; for m in $(MODULES); do echo "== vet: module $$m ($(SINCE_T0))"; (cd $$m && $(GO) vet ./...); done

## rie: install the AWS Runtime Interface Emulator at the pinned version
rie:
	@$(GO) version -m "$(GOBIN)/aws-lambda-rie" 2>/dev/null | grep -q '$(RIE_VER)' || $(GO) install $(RIE_MOD)@$(RIE_VER)

## build: the reference bootstrap for linux/arm64 and linux/amd64
build:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(BUILD_FLAGS) -o dist/arm64/bootstrap ./cmd/bootstrap
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build $(BUILD_FLAGS) -o dist/amd64/bootstrap ./cmd/bootstrap

## package: dist/bootstrap-arm64.zip and dist/bootstrap-amd64.zip for provided.al2023, byte-for-byte reproducible (cmd/lmigo-pack, which packs a function of yours too: docs/deploy.md)
package:
	$(GO) run ./cmd/lmigo-pack -o dist ./cmd/bootstrap

# test-arm64 runs these for linux/arm64: what goes into a bootstrap, the
# reference bootstrap under the emulator, the examples and the codecs. The rest
# (lmigo-pack, deploy, the load driver and its plots) is host-side tooling, and
# so is concurrent/lambdatest: no code of its own per architecture, and a
# child process per event under qemu (9 minutes); the examples run it there.
QEMU_ARM64 ?= qemu-aarch64-static
ARM64_PKGS ?= ./limits/... ./rapi/... ./pool/... ./concurrent/ ./concurrent/codec/... \
  ./concurrent/internal/... ./concurrent/lambdahttp/... ./concurrent/metrics/... ./cmd/bootstrap/...

## test-arm64: the runtime's tests built for linux/arm64 and run under qemu-user, the emulator's bootstrap too (no -race)
test-arm64: rie
	@command -v $(QEMU_ARM64) >/dev/null || { echo "test-arm64 needs $(QEMU_ARM64) (apt-get install qemu-user-static)"; exit 1; }
	PATH="$(GOBIN):$$PATH" GOARCH=arm64 LMIGO_RIE_EXEC=$(QEMU_ARM64) \
	  $(GO) test -exec $(QEMU_ARM64) -shuffle=on -timeout 10m $(ARM64_PKGS)
	@# CheckIsolation runs children of the test binary through LMIGO_RIE_EXEC.
	cd examples && GOARCH=arm64 LMIGO_RIE_EXEC=$(QEMU_ARM64) $(GO) test -exec $(QEMU_ARM64) -shuffle=on -timeout 10m ./...
	@# The codecs' arm64 code differs (wantCodecDiffsArm64).
	cd $(CODECTEST) && GOARCH=arm64 $(GO) test -exec $(QEMU_ARM64) -shuffle=on -timeout 10m ./...

## fuzz: every Fuzz target for FUZZTIME executions each (104 s on a quiet 2-vCPU VM, build cache warm, 2026-12-02; CI runs it), seed corpora in testdata/fuzz
# A count of executions, not a time: a time limit that ends while the
# baseline corpus is still being run fails with "context deadline exceeded".
FUZZTIME ?= 20000x
fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for t in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "fuzz: $$dir $$t"; \
	    (cd $$dir && $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) .); \
	  done; \
	done

## soak: N=64 for 10 minutes: 5 min of the reference bootstrap under mixed load (errors, panics, late and refused answers; exactly-once answers, flat memory), then 5 min of every handler form under injected faults (stalled 202s and past deadlines among them; 0 polls beyond N), ending in SIGTERM (each answer once, with its own token and invocation ID echo) (SOAK_FLAGS adds flags; CI runs 20 s of it, TestSoakShort)
soak:
	$(GO) -C loadtest run . soak $(SOAK_FLAGS)

## bench: the hot path side by side, BENCH_COUNT runs each, then benchstat (about 5 min): rapi vs a net/http client (NextRespond), one whole invocation through the runtime against a peer that allocates nothing (Invocation), the handler adapter vs aws-lambda-go's (Call), the json.RawMessage check vs json.Valid and json.Compact in MB/s on string- and structure-heavy bodies (CompactJSON); raw results in bench.txt
BENCH_HOT := ./rapi/ ./concurrent/ ./internal/jsonscan/
bench:
	@test -x "$(GOBIN)/benchstat" || $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VER)
	$(GO) test -run='^$$' -bench='^Benchmark(NextRespond|ParseNext|Invocation|Call|CompactJSON)$$' -benchmem -count=$(BENCH_COUNT) $(BENCH_HOT) | tee bench.txt
	@echo; echo "== rapi against a net/http client, one GET /next + POST /response on a warm connection"
	$(GOBIN)/benchstat -filter '.name:NextRespond' -col /client bench.txt
	@echo; echo "== one invocation through the runtime; the handler adapter, lmigo vs aws-lambda-go"
	$(GOBIN)/benchstat -filter '-.name:NextRespond -.name:CompactJSON' bench.txt
	@echo; echo "== a json.RawMessage result's check (compactJSON) against json.Valid and json.Compact, per body"
	$(GOBIN)/benchstat -filter '.name:CompactJSON' -col /impl bench.txt

## bench-all: benchmarks of every package, BENCH_COUNT runs each, into bench-all.txt (about 10 min at 6)
bench-all:
	@rm -f bench-all.txt; for m in $(MODULES); do (cd $$m && $(GO) test -run='^$$' -bench=. -benchmem -count=$(BENCH_COUNT) ./...) | tee -a bench-all.txt; done
	@test -x "$(GOBIN)/benchstat" || $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VER)
	$(GOBIN)/benchstat bench-all.txt

# Commit subjects from this one on are checked (the history before it is
# as it landed).
SUBJECTS_SINCE := e4e71a3

## lint: golangci-lint with the repository's .golangci.yml, every module tidy (make tidy), and commit subjects of at most 72 characters
lint: subjects tidy
	@test -x "$(GOBIN)/golangci-lint" || $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(LINT_VER)
	@set -e; for m in $(MODULES); do (cd $$m && $(GOBIN)/golangci-lint run --config $(CURDIR)/.golangci.yml ./...); done

## tidy: check that go.mod and go.sum of every module are what go mod tidy leaves (go mod tidy -diff); changes nothing
tidy:
	@set -e; for m in $(MODULES); do \
	  (cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "module $$m is not tidy: run go mod tidy in $$m"; exit 1; }; \
	done

## help: the targets and what each does, from these lines
help:
	@awk '/^## [a-z0-9-]+:/ { sub(/^## /, ""); i = index($$0, ": "); printf "  %-11s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' $(MAKEFILE_LIST)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf dist bench.txt bench-all.txt

subjects:
	@git rev-parse -q --verify $(SUBJECTS_SINCE) >/dev/null || exit 0; \
	  long=$$(git log --no-merges --format=%s $(SUBJECTS_SINCE)..HEAD | awk 'length > 72'); \
	  if [ -n "$$long" ]; then echo "commit subjects over 72 characters:"; echo "$$long"; exit 1; fi
