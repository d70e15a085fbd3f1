# encbench-tui in a small image, for loading one endpoint from several hosts
# (deploy/kubernetes/encbench-job.yaml; docs/sharding.md).
#   docker build -t your-registry/encbench-tui:latest .
# tests/it/deploy.rs checks this file against the command line.

FROM rust:1.95-slim-trixie AS build
WORKDIR /src
# The manifest names the benchmark, so its source must be there for cargo to read it.
COPY Cargo.toml Cargo.lock build.rs ./
COPY src src
COPY crates crates
COPY assets assets
COPY benches benches
RUN cargo build --release --locked --bin encbench-tui

FROM debian:trixie-slim
# Certificates for TLS endpoints (SageMaker, a gateway): rustls reads the system's store.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# A numeric non-root user, so Kubernetes' runAsNonRoot can check it.
RUN groupadd --system --gid 10001 encbench \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/encbench encbench
COPY --from=build /src/target/release/encbench-tui /usr/local/bin/encbench-tui
# Built into the binary too; shipped for the export's JSON Schema and the sample files.
COPY assets /usr/share/encbench/assets
USER 10001:10001
WORKDIR /home/encbench
ENTRYPOINT ["encbench-tui"]
CMD ["--help"]
