import { InvalidOptionError } from "./errors.js";
import { encodeResource, isText } from "./resource.js";

/*
 * `list({ match })`: a glob over resource names as given (not over keys), by character (code point):
 *   *       any run of characters, including none
 *   ?       exactly one character
 *   [abc]   one of these; [a-z] a range; [^abc] none of these
 *   \x      x itself: write \*, \?, \[ and \\ to match *, ?, [ and \ literally (in JS source: "\\*")
 * Every other character, braces and `%` included, matches itself.
 *
 * On Redis the glob becomes a SCAN MATCH over keys: literal characters are encoded as in keys (`{` → %7B…)
 * and escaped for Redis's glob; `?` and `[…]` become `*`, since Redis matches bytes and one character of a
 * name can be several bytes of a key (`é`, `%7B`). Each listed name is then tested against the exact glob.
 * On PostgreSQL it becomes a LIKE over names (`[…]` as `_`), tested exactly in the same way.
 */

type Token =
  | { k: "lit"; c: string }
  | { k: "any" }
  | { k: "one" }
  | { k: "set"; neg: boolean; ranges: [number, number][] };

const EXPECTED = "a glob of 1-1024 UTF-8 bytes over names (* ? [set], \\ escapes) without control characters";

/** A parsed `match`: its SCAN MATCH under a prefix, and the exact test on names. */
export interface Match {
  readonly glob: string;
  /** Redis SCAN MATCH over `<prefix>{…}` keys: every key of a matching name matches it (and maybe more). */
  scan(prefix: string): string;
  /** SQL LIKE (escape `\\`) over names: every matching name matches it (and maybe more, for `[…]`). */
  readonly like: string;
  test(resource: string): boolean;
}

const cache = new Map<string, Match>();

/** Validates `match` (InvalidOptionError) and compiles it. */
export function parseMatch(glob: unknown): Match {
  if (typeof glob !== "string") throw new InvalidOptionError("match", glob, EXPECTED);
  const hit = cache.get(glob);
  if (hit) return hit;
  if (!isText(glob, 1024)) throw new InvalidOptionError("match", glob, EXPECTED);
  const tokens = tokenize(glob);
  if (typeof tokens === "string") throw new InvalidOptionError("match", glob, `${EXPECTED} (${tokens})`);
  const re = new RegExp(`^${tokens.map(toRegExp).join("")}$`, "su");
  let keyGlob = "";
  let wild = false;
  for (const t of tokens) {
    if (t.k === "lit") keyGlob += escapeGlob(encodeResource(t.c));
    else if (!wild) keyGlob += "*";
    wild = t.k !== "lit";
  }
  const m: Match = {
    glob,
    scan: (prefix) => `${escapeGlob(prefix)}{${keyGlob}}`,
    like: tokens.map(toLike).join(""),
    test: (resource) => re.test(resource),
  };
  if (cache.size >= 100) cache.clear();
  cache.set(glob, m);
  return m;
}

/** Redis glob metacharacters escaped with a backslash. */
export function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\]/g, "\\$&");
}

function tokenize(glob: string): Token[] | string {
  const cs = [...glob];
  const out: Token[] = [];
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (c === "\\") {
      if (i + 1 >= cs.length) return "a trailing \\ escapes nothing";
      out.push({ k: "lit", c: cs[++i]! });
    } else if (c === "*") {
      if (out.at(-1)?.k !== "any") out.push({ k: "any" });
    } else if (c === "?") out.push({ k: "one" });
    else if (c === "[") {
      let j = i + 1;
      const neg = cs[j] === "^";
      if (neg) j++;
      const ranges: [number, number][] = [];
      const next = (): number | undefined => {
        let ch = cs[j++];
        if (ch === "\\") ch = cs[j++];
        return ch === undefined ? undefined : ch.codePointAt(0);
      };
      while (j < cs.length && cs[j] !== "]") {
        const from = next();
        if (from === undefined) break;
        let to = from;
        if (cs[j] === "-" && j + 1 < cs.length && cs[j + 1] !== "]") {
          j++;
          to = next() ?? from;
        }
        ranges.push(from <= to ? [from, to] : [to, from]);
      }
      if (j >= cs.length) return "a [ without its ]";
      if (ranges.length === 0) return "an empty []";
      out.push({ k: "set", neg, ranges });
      i = j;
    } else out.push({ k: "lit", c });
  }
  return out;
}

function toLike(t: Token): string {
  if (t.k === "lit") return t.c.replace(/[\\%_]/g, "\\$&");
  return t.k === "any" ? "%" : "_";
}

const u = (cp: number) => `\\u{${cp.toString(16)}}`;

function toRegExp(t: Token): string {
  switch (t.k) {
    case "lit":
      return t.c.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
    case "any":
      return ".*";
    case "one":
      return ".";
    case "set":
      return `[${t.neg ? "^" : ""}${t.ranges.map(([a, b]) => (a === b ? u(a) : `${u(a)}-${u(b)}`)).join("")}]`;
  }
}
