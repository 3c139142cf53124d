// Node's process.loadEnvFile never refuses a line: "garbage" joins the next line into one key, and an unclosed
// quote keeps the quote in the value. So .env is checked here first, and a bad line is named.

const KEY = /^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=/;

/** The first problem in a .env file's text ("line N: …, expected …"), or null when every line is one we read. */
export function dotenvProblem(text) {
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = `line ${i + 1} (${JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw)})`;
    if (!KEY.test(line)) return `${at} is not KEY=VALUE, a # comment or blank`;
    const value = line.slice(line.indexOf("=") + 1).trim();
    const quote = value[0];
    if (quote !== '"' && quote !== "'" && quote !== "`") continue;
    const close = value.indexOf(quote, 1);
    if (close === -1) return `${at} opens a ${quote} quote it never closes`;
    const after = value.slice(close + 1).trim();
    if (after !== "" && !after.startsWith("#"))
      return `${at} has ${JSON.stringify(after)} after its closing ${quote} quote`;
  }
  return null;
}
