# Model Gateway container image (docs: README "Deploy").
# Two stages: `build` compiles TypeScript with the dev dependencies and then replaces them with
# the production ones (better-sqlite3 compiled for this image), `runtime` copies only the result.
# Base: the supported Node line (package.json engines: >= 20.18.1), Debian bookworm slim.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Toolchain for better-sqlite3's native addon when no prebuilt binary matches.
# hadolint ignore=DL3008
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: `prepare` would build before the sources are here, and the compiler needs
# no native addon; better-sqlite3's is built below, for the production dependencies.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# `npm run build` = tsc, then the start-up bundle (scripts/bundle.ts, esbuild; ADR 16).
COPY scripts ./scripts
RUN npm run build \
  && rm -rf node_modules \
  && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3 \
  && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    SQLITE_PATH=/data/gateway.db
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY dashboard ./dashboard
# The image's `node` user (uid 1000); numeric so that Kubernetes runAsNonRoot can verify it.
RUN mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
VOLUME ["/data"]
EXPOSE 8080
# No curl in the slim image: Node's own fetch asks /health (liveness: the process answers).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form, no shell or npm in between: SIGTERM reaches Node, which drains and exits 0.
CMD ["node", "dist/main.js"]
