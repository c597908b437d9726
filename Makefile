# Common tasks. `make` alone runs what CI runs.
.PHONY: ci test generate sqlc console lint demo build

ci:
	bash .ci/run

test:
	go test -race ./...

GOLANGCI_LINT := .tools/bin/golangci-lint
GOLANGCI_LINT_VERSION := v2.15.0

# Static analysis: golangci-lint with the linters of .golangci.yml
# (staticcheck, errcheck, gosec, rowserrcheck, sqlclosecheck, bodyclose,
# ineffassign, unused, thelper, govet), installed into .tools/bin.
lint:
	@[ -x $(GOLANGCI_LINT) ] || GOBIN=$(CURDIR)/.tools/bin go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	$(GOLANGCI_LINT) run ./...

CONSOLE := admin/internal/console

# Regenerates proto/carillon/v1 and the console's TypeScript client from the
# .proto files (buf installed locally by npm; protoc-gen-es from the console's
# packages).
generate:
	@[ -x .tools/node_modules/.bin/buf ] || npm install --no-audit --no-fund --silent --prefix .tools @bufbuild/buf@1.75.0
	@[ -x $(CONSOLE)/web/node_modules/.bin/protoc-gen-es ] || npm ci --no-audit --no-fund --prefix $(CONSOLE)/web
	.tools/node_modules/.bin/buf lint
	.tools/node_modules/.bin/buf format -w
	.tools/node_modules/.bin/buf generate

SQLC := .tools/bin/sqlc
SQLC_VERSION := v1.31.1

# Regenerates admin/internal/store/dbsqlc from the store's queries/*.sql,
# checking each query against both schemas (admin/internal/store/sqlc.yaml).
# sqlc's PostgreSQL parser is C: building it needs cgo and a C compiler, and
# takes a few minutes once. Commit what it writes: go build needs no sqlc.
sqlc:
	@[ -x $(SQLC) ] || CGO_ENABLED=1 GOBIN=$(CURDIR)/.tools/bin go install github.com/sqlc-dev/sqlc/cmd/sqlc@$(SQLC_VERSION)
	rm -rf admin/internal/store/dbsqlc/*.sql.go .tools/sqlc # sqlc leaves the files of queries removed since
	cd admin/internal/store && $(CURDIR)/$(SQLC) generate

build:
	CGO_ENABLED=0 go build -o bin/carillon ./admin/cmd/carillon

demo:
	go run ./admin/cmd/carillon serve --demo

# Rebuilds the web console into admin/internal/console/dist, which the admin
# embeds (commit it: go build needs no Node).
console: generate
	npm run --prefix $(CONSOLE)/web build
