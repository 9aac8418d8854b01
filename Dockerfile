# Not built on the development machines (no container engine there): keep it minimal.
FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
# The page is a workspace of the root: npm ci needs its package.json too.
COPY package.json package-lock.json ./
COPY web/package.json ./web/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The catalogue page is built with the development dependencies and only its output is kept.
FROM node:24-bookworm-slim AS page
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json ./web/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY web ./web
RUN node web/build.ts

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DB_URL=sqlite:/data/books.db
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY migrations ./migrations
COPY src ./src
COPY scripts/backup.ts scripts/restore.ts ./scripts/
COPY --from=page /app/web/dist ./web/dist
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "src/main.ts"]
