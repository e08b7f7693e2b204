# syntax=docker/dockerfile:1
# unified-ai-mock as a container: the mock server on port 4010 (and the conformance runner).
#   docker build -t unified-ai-mock .
#   docker run --rm -p 4010:4010 unified-ai-mock

# The base of both stages: pin a digest (node:24-alpine@sha256:...) or name a mirror with
# --build-arg NODE_IMAGE=...
ARG NODE_IMAGE=node:24-alpine

# Build stage: compile the TypeScript and generate the build-time files of dist/.
FROM ${NODE_IMAGE} AS build
# Behind a TLS-inspecting proxy: the CA bundle npm must trust, mounted into the build
# (podman build -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro
# --build-arg NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt). Unset, npm trusts Node's own CAs.
ARG NPM_CONFIG_CAFILE
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: `prepare` would build before the sources are here; the build runs below, once.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY inspector ./inspector
COPY src ./src
COPY schemas ./schemas
COPY fixtures ./fixtures
RUN npm run build

# Runtime stage: production dependencies and what the npm package ships, nothing else.
FROM ${NODE_IMAGE} AS runtime
ARG NPM_CONFIG_CAFILE
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY schemas ./schemas
COPY fixtures ./fixtures
COPY conformance ./conformance
COPY client-check ./client-check
# The documents, which `--help` and the messages point to.
COPY docs/*.md ./docs/
# The image's own unprivileged user; the files stay root-owned, so the server cannot change them.
USER node
EXPOSE 4010
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:4010/__health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Arguments after the image name replace CMD: `docker run IMAGE conformance --base-url ...` runs the suite.
# --max-semi-space-size=8: the young generation `npm start` gives the server (docs/architecture.md, "The young
# generation's size"), half Node 20's and 22's default and a quarter of Node 24's; V8 sizes it when the process starts.
ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/cli/main.js"]
# 0.0.0.0: the mock binds 127.0.0.1 by default, which a published port cannot reach.
CMD ["serve", "--host", "0.0.0.0", "--port", "4010"]
