import type { ClusterNodeInfo } from "../types.js";

/**
 * The live nodes of a Cluster from a `CLUSTER NODES` reply: each line is
 * `<id> <host:port@bus> <flags> <master-id|-> <ping> <pong> <epoch> <link> <slot ranges…>`. Nodes flagged
 * `fail`, `fail?` or `handshake`, and masters with no slots, are left out.
 */
export function parseClusterNodes(reply: string): ClusterNodeInfo[] {
  const rows = reply
    .trim()
    .split("\n")
    .map((line) => line.trim().split(" "))
    .filter((r) => r.length >= 8);
  const addressOf = new Map(rows.map((r) => [r[0], (r[1] ?? "").split("@")[0] ?? ""]));
  const nodes: ClusterNodeInfo[] = [];
  for (const r of rows) {
    const flags = (r[2] ?? "").split(",");
    if (flags.some((f) => f === "fail" || f === "fail?" || f === "handshake" || f === "noaddr")) continue;
    const address = addressOf.get(r[0]) ?? "";
    if (flags.includes("master")) {
      const slots = r.slice(8).filter((s) => !s.startsWith("["));
      if (slots.length > 0) nodes.push({ address, role: "master", master: null, slots });
    } else if (flags.includes("slave")) {
      nodes.push({ address, role: "replica", master: addressOf.get(r[3] ?? "") ?? null, slots: [] });
    }
  }
  return nodes.sort((a, b) => a.address.localeCompare(b.address));
}
