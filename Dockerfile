# syntax=docker/dockerfile:1
# Two images from one file: `--target api` (the tRPC server) and `--target web` (the dashboard, Next.js
# standalone output). docker-compose.yml builds both. Not used by the tests, which lint this file instead.
ARG NODE_IMAGE=node:24-bookworm-slim

# Every dependency (dev included), cached on the manifests alone.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 TURBO_TELEMETRY_DISABLED=1
COPY package.json package-lock.json ./
COPY apps/api/package.json apps/api/
COPY apps/web/package.json apps/web/
COPY packages/lock/package.json packages/lock/
COPY packages/ui/package.json packages/ui/
COPY bench/package.json bench/
COPY faults/package.json faults/
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY . .
RUN NEXT_OUTPUT=standalone npx turbo run build --filter=@lockyard/api --filter=@lockyard/web

# The API's production dependencies only (no dev tools, no Next.js).
FROM deps AS api-deps
RUN rm -rf node_modules && npm ci --omit=dev --workspace=@lockyard/api --no-audit --no-fund

FROM ${NODE_IMAGE} AS web
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOSTNAME=0.0.0.0 PORT=3000
# server.js plus the node_modules Next traced for it; static assets are served by the same server.
COPY --from=build --chown=node:node /app/apps/web/.next/standalone ./
COPY --from=build --chown=node:node /app/apps/web/.next/static ./apps/web/.next/static
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "apps/web/server.js"]

FROM ${NODE_IMAGE} AS api
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4001
COPY --from=api-deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/packages/lock/package.json ./packages/lock/
COPY --from=build /app/packages/lock/dist ./packages/lock/dist
COPY --from=build /app/apps/api/package.json ./apps/api/
COPY --from=build /app/apps/api/dist ./apps/api/dist
USER node
EXPOSE 4001
# Ready means Redis answers (and Redlock/PostgreSQL when READY_REQUIRES lists them): see /readyz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4001)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "apps/api/dist/server.js"]
