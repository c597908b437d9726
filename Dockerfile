# The admin as a container: the static binary on distroless, non-root, the
# database on a volume.
#
#   docker build -t carillon .
#   docker run -p 8080:8080 -p 9464:9464 -v carillon-data:/data carillon
#
# The API listens on 8080 and the Prometheus metrics on 9464 (no
# credential: publish that port only where your scraper reaches it).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Pure Go (modernc.org/sqlite): a static binary, runnable on distroless/static.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/carillon ./admin/cmd/carillon \
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
ENTRYPOINT ["/usr/local/bin/carillon"]
CMD ["serve"]
