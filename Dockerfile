# One image for api and web (docker-compose.yml picks the command). Not used by the tests.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 TURBO_TELEMETRY_DISABLED=1
COPY . .
RUN npm ci --no-audit --no-fund && npx turbo run build --filter=@lockyard/api --filter=@lockyard/web

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1
COPY --from=build /app /app
EXPOSE 3000 4001 4002
