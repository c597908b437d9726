# Common tasks. `make` alone runs what CI runs.
.PHONY: ci test generate lint demo build

ci:
	bash .ci/run

test:
	go test -race ./...

# Regenerates proto/carillon/v1 from the .proto files (buf installed locally by npm).
generate:
	@[ -x .tools/node_modules/.bin/buf ] || npm install --no-audit --no-fund --silent --prefix .tools @bufbuild/buf@1.75.0
	.tools/node_modules/.bin/buf lint
	.tools/node_modules/.bin/buf format -w
	.tools/node_modules/.bin/buf generate

build:
	CGO_ENABLED=0 go build -o bin/carillon ./admin/cmd/carillon

demo:
	go run ./admin/cmd/carillon serve --demo
