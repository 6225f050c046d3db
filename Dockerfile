# syntax=docker/dockerfile:1
# CleverAgents server image: `docker build -t cleveragents .`, then see docs/running-a-server.md
# ("Container") for the run command and what command confinement needs inside a container.
#
# Stage 1 builds the bundle from the sources and assembles the runtime tree (the bundle and the
# production dependencies only) with deploy/image/assemble.sh, the script CI runs without Docker.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
  && sh deploy/image/assemble.sh /src /opt/cleveragents

# Stage 2: Node, git (plans, resources) and bubblewrap (confined commands); no compilers, no sources.
FROM node:24-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends git bubblewrap ca-certificates \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir /data \
  && chown node:node /data
COPY --from=build /opt/cleveragents /opt/cleveragents
RUN ln -s /opt/cleveragents/dist/src/bundle/agents.js /usr/local/bin/agents
# The image's own unprivileged user (uid 1000); the data directory is the one volume.
USER node
ENV CLEVERAGENTS_DATA_DIR=/data \
  NODE_ENV=production
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["agents"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
