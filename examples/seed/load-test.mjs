#!/usr/bin/env node
// The seed article's C# load test (§6.3), translated line for line: HttpClient.PostAsync → fetch,
// Task.WhenAll → Promise.all, Stopwatch → performance.now. Node ≥ 20, no dependencies.
//   node examples/seed/load-test.mjs [url]
// The default URL is the seed's, on the first API of `npm start` (port 4001 instead of 5000).
const url = process.argv[2] ?? "http://localhost:4001/api/stock/deduct?productId=1001";

const tasks = [];
const started = performance.now();

for (let i = 0; i < 200; i++) {
  tasks.push(fetch(url, { method: "POST" }));
}

const responses = await Promise.all(tasks);
const successCount = responses.filter((r) => r.ok).length;
const elapsedMs = Math.round(performance.now() - started);

console.log(`成功响应数 (successful responses): ${successCount}`);
console.log(`耗时 (elapsed): ${elapsedMs} ms`);

// Not in the seed: a sold-out request is a 200 too, so also count the sales themselves.
const bodies = await Promise.all(responses.map((r) => r.json().catch(() => null)));
console.log(`"success": true (units sold): ${bodies.filter((b) => b?.success === true).length}`);
