# cutune on Debian 12, the platform the README names. Build stage: debian:12 with the CUDA 13.0
# toolkit from NVIDIA's Debian 12 apt repository and the same dependency script as every other
# machine (scripts/install-deps.sh --with-cuda). Runtime stage: debian:12-slim with only the
# libraries the binaries load (install-deps.sh --runtime, the one list of them), run as an
# unprivileged user. The GPU host's driver (libcuda.so.1) is mounted by the NVIDIA container
# toolkit; without one, cutuned runs as a table server. tests/scripts/docker_test.py checks this
# file against the binaries (flags, ports, libraries). docs/deploy.md: how it is run.
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN CUTUNE_DEPS_NO_BROWSER=1 bash scripts/install-deps.sh --with-cuda
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build -j"$(nproc)" --target cutuned cutune cutune-worker \
 && install -D -m 755 -t /opt/cutune/bin build/bin/cutuned build/bin/cutune build/bin/cutune-worker \
 && cp -r tables /opt/cutune/tables

FROM debian:12-slim AS runtime
COPY scripts/install-deps.sh /tmp/install-deps.sh
# uid/gid 10001, numeric below, so that Kubernetes' runAsNonRoot can verify it.
RUN bash /tmp/install-deps.sh --runtime && rm /tmp/install-deps.sh \
 && groupadd --system --gid 10001 cutune \
 && useradd --system --uid 10001 --gid cutune --home-dir /var/lib/cutune --no-create-home \
      --shell /usr/sbin/nologin cutune \
 && install -d -o cutune -g cutune -m 750 /var/lib/cutune /var/cache/cutune
COPY --from=build /opt/cutune /opt/cutune
# What the NVIDIA container toolkit mounts when the container is given a GPU (libcuda for compute);
# without a GPU it mounts nothing and cutuned serves tables.
ENV PATH=/opt/cutune/bin:$PATH \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 10001:10001
# The store (SQLite, every measured row: an interrupted sweep resumes from it) outlives the
# container; the compile cache is only a cache.
VOLUME /var/lib/cutune
EXPOSE 50051
ENTRYPOINT ["cutuned", "--db", "/var/lib/cutune/cutune.db", "--tables", "/opt/cutune/tables", \
            "--cache-dir", "/var/cache/cutune/nvrtc"]
# Safe by default: reachable from outside the container, so callers must present a token (mount
# the two files, e.g. as secrets readable by uid 10001; without them cutuned refuses to start and
# says why). Plaintext is meant for a network that encrypts, or a TLS-terminating proxy; pass
# --tls-cert/--tls-key to encrypt here instead. docs/api.md ("Exposure") has the rules and the
# opt-outs.
CMD ["--listen", "0.0.0.0:50051", "--allow-insecure-remote", \
     "--admin-tokens", "/run/secrets/cutune-admin-tokens", \
     "--read-tokens", "/run/secrets/cutune-read-tokens"]
