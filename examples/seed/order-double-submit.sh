#!/usr/bin/env bash
# The seed article's order submit (§7.1), verbatim except the port (5000 → 4001), sent five times at once:
# a double click, five times over. `-s -w` (not in the seed) prints each response's status after its body.
# Expected: one {"success":true,"orderId":100001,...}, four 409s with {"message":...}. Run it again and the
# stored order comes back: 200 with "replayed":true (while no submit of it is in flight).
for i in 1 2 3 4 5; do
  curl -s -w " HTTP %{http_code}\n" -X POST http://localhost:4001/api/order/submit \
    -H "Content-Type: application/json" \
    -d "{\"orderId\": 100001}" &
done
wait
