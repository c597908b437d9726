# The admin as a container: the static binary on distroless, non-root, the
# database on a volume.
#
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t carillon .
#   docker run -p 8080:8080 -p 127.0.0.1:9464:9464 -v carillon-data:/data \
#     -e CARILLON_ADMIN_PASSWORD='choose one' carillon
#
# The API listens on 8080 and the Prometheus metrics on 9464, which have no
# credential: the example publishes that port on the host's loopback only;
# publish it where your scraper, and nothing else, reaches it. The first
# ADMIN's generated password is printed only to a terminal (docker run -it),
# never into the container's log: set CARILLON_ADMIN_PASSWORD for the first
# start, or run carillon reset-admin-password on the volume later.
# REVISION (the build context has no .git) is what carillon version prints.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=
# Pure Go (modernc.org/sqlite): a static binary, runnable on distroless/static.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags="-s -w -X github.com/carillonhq/carillon/admin/internal/version.revision=${REVISION}" \
      -o /out/carillon ./admin/cmd/carillon \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/carillon /usr/local/bin/carillon
# The database directory, owned by the nonroot user (65532) the image runs as.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
ENV CARILLON_LISTEN=0.0.0.0:8080 \
    CARILLON_DB=/data/carillon.db \
    CARILLON_METRICS_LISTEN=0.0.0.0:9464 \
    CARILLON_LOG_FORMAT=json
EXPOSE 8080 9464
# No shell nor curl in the image: the binary checks its own /readyz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/carillon", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/carillon"]
CMD ["serve"]
