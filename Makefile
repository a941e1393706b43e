# Lantern: two commands on a fresh machine — `make up` starts the stack, `make test` runs every test.
.PHONY: up down test bench fuzz build deploy-files

up:    ## install what is missing, start PostgreSQL, Redis and every service; prints the gateway URL
	@bash scripts/up.sh

down:  ## stop the stack (data stays in .lantern/)
	@bash scripts/down.sh

test:  ## run all tests against their own PostgreSQL and Redis
	@bash scripts/test.sh

bench: ## build release binaries and run the benchmarks of docs/benchmarks.md
	@bash scripts/bench.sh

fuzz:  ## every parser of untrusted bytes under libFuzzer + AddressSanitizer, FUZZ_SECONDS each (default 600); summary in .lantern/fuzz/results.txt
	@bash scripts/fuzz.sh

build:
	@swift build

deploy-files: ## assemble docker-compose.yml and infra/k8s/lantern.yaml from Services/services.tsv and each Services/<Folder>/deploy/
	@bash scripts/deploy-files.sh
