# Switchboard: build the TypeScript service and run it on Node 20 as a non-root user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Exactly the locked versions (the lock file holds every platform's optional packages, so npm 10 and 11 both accept it).
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY manager ./manager
# The service and the manager page (manager/dist, served at /manager).
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/app/data DATABASE_CONNECTION_URI=file:/app/data/switchboard.db SERVER_PORT=8080
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/manager/dist ./manager/dist
COPY package.json ./
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
EXPOSE 8080
VOLUME ["/app/data"]
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.SERVER_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# A larger young generation: fewer garbage-collection pauses on the send path (see bench/RESULTS.md).
CMD ["node", "--max-semi-space-size=64", "dist/src/main.js"]
