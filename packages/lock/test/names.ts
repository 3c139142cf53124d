/** Names people use (issue 15), each with characters the old rule refused. */
export const NAMES = [
  "user:alice@example.com",
  "files/2026/report.pdf",
  "order 1001",
  "订单:1001",
  "tenant:{acme}:job",
  "{",
  "}{",
  "a*b",
  "q?",
  "[x]",
  "100%",
  "%7B",
  "back\\slash",
  "ünï 🔒",
];
