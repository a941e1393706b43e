# Lantern: two commands on a fresh machine — `make up` starts the stack, `make test` runs every test.
.PHONY: up down test bench profile fuzz build deploy-files compose-secrets token demo status logs reset client time-travel appstore-purchase appstore-refund

up:    ## install what is missing, start PostgreSQL, Redis and every service; prints the gateway URL
	@bash scripts/up.sh

token: ## sign a made-up person in through the gateway (APP=pairly NAME=Ada PROVIDER=google|apple) and print the tokens
	@python3 scripts/dev.py token --app "$(or $(APP),pairly)" --name "$(or $(NAME),Ada)" --provider "$(or $(PROVIDER),google)"

demo:  ## drive Pairly, AstroSvitla, Lucky Day, RoastMeLater and Symbi through the gateway as people would, printing each step
	@python3 scripts/dev.py demo

appstore-purchase: ## sign a made-up App Store purchase as StoreKit hands it to the app (PRODUCT=app.lantern.astrosvitla.report.career ACCOUNT=<user id>)
	@python3 scripts/dev.py appstore-purchase --product "$(or $(PRODUCT),app.lantern.astrosvitla.report.career)" --account "$(ACCOUNT)"

appstore-refund: ## the App Store refunds a purchase: sign a REFUND notification and post it to the gateway (TRANSACTION=<signedTransaction>)
	@python3 scripts/dev.py appstore-refund --transaction "$(TRANSACTION)"

time-travel: ## move the local stack's clock forward, for daily features (DAYS=1, HOURS=, SECONDS=; none: print the stack's time)
	@python3 scripts/dev.py time-travel --days "$(or $(DAYS),0)" --hours "$(or $(HOURS),0)" --seconds "$(or $(SECONDS),0)"

status: ## each process of the local stack: pid, API port, readiness
	@python3 scripts/dev.py status

logs:  ## follow every log of the local stack (SERVICE=gateway for one)
	@bash scripts/logs.sh $(SERVICE)

reset: ## stop the stack and delete its local data (database, Redis, photos, logs), after a confirmation
	@bash scripts/reset.sh

down:  ## stop the stack (data stays in .lantern/)
	@bash scripts/down.sh

test:  ## run all tests against their own PostgreSQL and Redis
	@bash scripts/test.sh

bench: ## build release binaries and run the benchmarks of docs/benchmarks.md
	@bash scripts/bench.sh

profile: ## where GET /v1/me's CPU goes, by process and function (perf, callgrind); results in .lantern/profile/
	@bash scripts/profile.sh

fuzz:  ## every parser of untrusted bytes under libFuzzer + AddressSanitizer, FUZZ_SECONDS each (default 600); summary in .lantern/fuzz/results.txt
	@bash scripts/fuzz.sh

build:
	@swift build

deploy-files: ## assemble docker-compose.yml, the image lock infra/Package.resolved and the rendered Kubernetes overlays (infra/k8s/rendered)
	@bash scripts/deploy-files.sh

compose-secrets: ## make the secret files docker-compose.yml mounts (random values, once) under .lantern/compose
	@bash scripts/compose-secrets.sh

client: ## regenerate the Swift client of the API (Clients/LanternClient) from docs/api/openapi.yaml with swift-openapi-generator
	@bash scripts/openapi-client.sh
