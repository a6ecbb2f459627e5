# The lab as an image: lab and lab-worker, nothing else. docker compose's
# `lab` service (the whole workshop) runs it; so can a laptop:
#   docker build -t rmlab/lab .
#   docker run --rm -it --network host rmlab/lab        # the screen, local servers
# The base images are build arguments so CI builds it from stand-ins made
# here (.ci/docker), where no registry can be reached.
ARG GO_IMAGE=golang:1.26
ARG RUNTIME_IMAGE=debian:trixie-slim

FROM ${GO_IMAGE} AS modules
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download

# The outside packages the two binaries import, listed from the source. The
# build below compiles them in a layer of their own, keyed by this list's
# content: a change to the lab's own code rebuilds only the lab's packages
# (about a sixth of the work), and no list kept by hand can drift.
FROM modules AS deps
COPY . .
RUN CGO_ENABLED=0 go list -deps -f '{{with .Module}}{{if not .Main}}{{$.ImportPath}}{{end}}{{end}}' \
    ./cmd/lab ./cmd/lab-worker >/deps.txt

FROM modules AS build
COPY --from=deps /deps.txt /deps.txt
RUN CGO_ENABLED=0 go build -trimpath $(cat /deps.txt)
COPY . .
# Static binaries: the runtime image needs no C library of a given version.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/lab ./cmd/lab && \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/lab-worker ./cmd/lab-worker

FROM ${RUNTIME_IMAGE}
# lab-worker beside lab: workers start from it, in a third of the CPU.
COPY --from=build /out/lab /out/lab-worker /usr/local/bin/
ENV XDG_STATE_HOME=/var/lib/lab
VOLUME /var/lib/lab
EXPOSE 2222
ENTRYPOINT ["lab"]
