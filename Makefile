# Groundwork / curate. `make test` is the command the README and CI run.
GO       ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN      ?= bin/curate
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: all build test bench lint tidy fmt vet staticcheck demo fuzz clean readback-deps readback report-screenshots

all: build test lint

build:
	$(GO) build -ldflags "-X github.com/groundwork/curate/cmd/curate/internal/cli.version=$(VERSION)" -o $(BIN) ./cmd/curate

test:
	$(GO) test ./...

# Benchmarks: parse throughput (MB/s, allocations), store write speed, ...
bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./...

lint: tidy fmt vet staticcheck

# go.mod and go.sum as go mod tidy leaves them (prints the diff otherwise).
tidy:
	$(GO) mod tidy -diff

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The whole pipeline, offline, on the bundled synthetic corpus.
demo:
	$(GO) run ./cmd/curate demo

# A fuzzing session of FUZZTIME per target (the seed corpora also run in
# `make test`); the inputs the parser's sessions found interesting are kept
# as seeds under parse/latexml/testdata/fuzz. A bare "context deadline exceeded"
# at the end of a session, with no new failing input written under
# testdata/fuzz, is a race in Go's fuzzing coordinator (golang/go#75804),
# not a finding.
FUZZTIME ?= 10m
FUZZPARALLEL ?= 1
FUZZCACHE = $(shell $(GO) env GOCACHE)/fuzz/github.com/groundwork/curate
fuzz:
	$(GO) test ./parse/latexml -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel $(FUZZPARALLEL) -timeout 0
	$(GO) test ./parse/latexml -run '^$$' -fuzz '^FuzzReferenceTitle$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel $(FUZZPARALLEL) -timeout 0
	$(GO) test ./parse/arxiv -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel $(FUZZPARALLEL) -timeout 0
	for t in FuzzParse FuzzReferenceTitle; do \
		mkdir -p parse/latexml/testdata/fuzz/$$t && cp -n $(FUZZCACHE)/parse/latexml/$$t/* parse/latexml/testdata/fuzz/$$t/ 2>/dev/null || true; \
	done

clean:
	rm -rf bin curate-data curate-demo

# End-to-end benchmarks against simulated services (package sim): rate
# efficiency on 200 targets under a robots.txt Crawl-delay, an estimate
# against the run it estimated, page archives, peak RSS on 5,000 and
# 49,999 targets (the simulated world's largest) and a no-op rerun, peak
# RSS of curate parse and fetch on hostile pages and TEI of 62.9 MB, and
# the LLM providers and modes (sync, cached, batch) on 200 targets.
# About an hour on 2 cores; the README has the figures.
.PHONY: bench-e2e bench-providers
bench-e2e: build
	$(GO) run ./cmd/curate-bench -curate $(BIN) -memory-more 49999 all

# The LLM providers and modes alone: curate run on 200 simulated targets
# whose pages have the recipe's paper length, through each simulated API
# and mode, then BenchmarkProviderModes (a target's classify and gold-card
# calls at the recipe's 3,000 shared and 6,000 paper tokens a call).
bench-providers: build
	$(GO) run ./cmd/curate-bench -curate $(BIN) providers
	$(GO) test ./client/llm -run '^$$' -bench ProviderModes -benchtime 1x

# The chaos harness (package internal/chaos): ROUNDS seeded rounds of
# misfortune aimed at a published dataset (SIGKILL of dataset and run at
# random moments, two writers on one --out, usage errors, damaged published
# files and blobs, a truncated WAL, a user's files in the output directory,
# a lost robots.txt, a copied gold card, keys planted in echoing services,
# instructions a model obeys quietly, hostile pages just under the download
# cap), against the simulated services on loopback; each round checks that
# the dataset passes --check or is the one published before, that no
# command panicked or hung, and its own kind's expectations. Exit 1 when a
# round failed. CHAOS_FLAGS adds flags (-kinds, -timeout, -json FILE).
ROUNDS ?= 100
SEED   ?= 1
.PHONY: chaos
chaos: build
	$(GO) run ./cmd/curate-chaos -curate $(BIN) -rounds $(ROUNDS) -seed $(SEED) $(CHAOS_FLAGS)

# The JavaScript Parquet readers (hyparquet with only its built-in codecs,
# and DuckDB) that the readback tests run beside Arrow's Go reader; `go
# test` skips them, saying so, when they are not installed.
READBACK_JS ?= internal/readback/js
readback-deps:
	npm ci --prefix $(READBACK_JS) --no-audit --no-fund

# Every Parquet output (dataset, exports, SFT, topics, pairs) read back by
# Arrow's Go reader, hyparquet and DuckDB; a missing reader fails here.
readback: readback-deps
	CURATE_REQUIRE_JS_READERS=1 $(GO) test -count=1 -run 'Readers' ./dataset/... ./sft/... ./topics/... ./pairs/...

# Screenshots of report.html in headless Chromium (Debian's chromium
# package: apt-get install -y chromium) at a desktop and a phone width:
# the demo's report and the report of a large synthetic dataset, whose
# charts are at their busiest. Look at $(SHOTS)/*.png.
SHOTS    ?= report-shots
CHROMIUM ?= chromium
SHOT_WIDTHS ?= 1280 420
report-screenshots: build
	rm -rf $(SHOTS) && mkdir -p $(SHOTS)
	$(BIN) demo --store $(SHOTS)/store --out $(SHOTS)/demo >/dev/null
	$(GO) test ./dataset -count=1 -run '^TestSampleReport$$' -sample-report $(abspath $(SHOTS))/sample
	for r in demo sample; do for w in $(SHOT_WIDTHS); do \
		$(CHROMIUM) --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
			--disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir=$(abspath $(SHOTS))/profile-$$r-$$w --hide-scrollbars --window-size=$$w,7200 \
			--screenshot=$(abspath $(SHOTS))/$$r-$$w.png file://$(abspath $(SHOTS))/$$r/report.html 2>/dev/null || exit 1; \
	done; done
	rm -rf $(SHOTS)/profile-*
	@ls $(SHOTS)/*.png
