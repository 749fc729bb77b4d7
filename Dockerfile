# cutune: build on the CUDA 13.0 devel image with the same dependency script as every other
# machine (scripts/install-deps.sh), ship a slim runtime image. The GPU host's driver is mounted
# by the NVIDIA container toolkit; without one, cutuned runs as a table server.
ARG CUDA_VERSION=13.0.0
FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu24.04 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN CUTUNE_DEPS_NO_BROWSER=1 bash scripts/install-deps.sh
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build -j"$(nproc)" --target cutuned cutune cutune-worker \
 && bash scripts/bundle.sh /opt/cutune build/bin/cutuned build/bin/cutune build/bin/cutune-worker \
 && cp -r tables /opt/cutune/tables

FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04 AS runtime
COPY --from=build /opt/cutune /opt/cutune
ENV PATH=/opt/cutune/bin:$PATH \
    LD_LIBRARY_PATH=/opt/cutune/lib:/usr/local/cuda/lib64
VOLUME /var/lib/cutune
EXPOSE 50051
ENTRYPOINT ["cutuned", "--db", "/var/lib/cutune/cutune.db", "--tables", "/opt/cutune/tables"]
# Safe by default: reachable from outside the container, so callers must present a token (mount
# the two files, e.g. as secrets; without them cutuned refuses to start and says why). Plaintext
# is meant for a network that encrypts, or a TLS-terminating proxy; pass --tls-cert/--tls-key to
# encrypt here instead. docs/api.md ("Exposure") has the rules and the opt-outs.
CMD ["--listen", "0.0.0.0:50051", "--allow-insecure-remote", \
     "--admin-tokens", "/run/secrets/cutune-admin-tokens", \
     "--read-tokens", "/run/secrets/cutune-read-tokens"]
