# Groundwork / curate. `make test` is the command the README and CI run.
GO       ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN      ?= bin/curate
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: all build test bench lint fmt vet staticcheck demo fuzz clean readback-deps readback report-screenshots

all: build test lint

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/curate

test:
	$(GO) test ./...

# Benchmarks: parse throughput (MB/s, allocations), store write speed, ...
bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./...

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The whole pipeline, offline, on the bundled synthetic corpus.
demo:
	$(GO) run ./cmd/curate demo

# A short fuzzing session per target (the seed corpora also run in `make test`).
fuzz:
	$(GO) test ./latexml -run '^$$' -fuzz FuzzParse -fuzztime 60s
	$(GO) test ./arxiv -run '^$$' -fuzz FuzzParse -fuzztime 30s

clean:
	rm -rf bin curate-data curate-demo

# End-to-end benchmarks against simulated services (package sim): rate
# efficiency on 200 targets, peak RSS and a no-op rerun on 5,000 targets.
# About 20 minutes on 2 cores; the README has the figures.
.PHONY: bench-e2e
bench-e2e: build
	$(GO) run ./cmd/curate-bench -curate $(BIN) all

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
