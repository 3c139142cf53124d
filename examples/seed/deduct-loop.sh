#!/usr/bin/env bash
# The seed article's concurrency check (§6.3), verbatim except the port: 5000 → 4001, the first API of
# `npm start`. The seed's stock was an in-memory 100 that every restart restored; here it lives in Redis,
# so set it first:
#   curl -X POST "http://localhost:4001/api/stock/reset?productId=1001&stock=100"

# 先查看初始库存
curl http://localhost:4001/api/stock/status

# 并发请求脚本：200 个请求同时发
for i in $(seq 1 200); do
  curl -s -X POST "http://localhost:4001/api/stock/deduct?productId=1001" > /dev/null &
done
wait

# 看最终库存是否为 0 (the article's "then check that stock is 0, not negative", as a command)
curl http://localhost:4001/api/stock/status
