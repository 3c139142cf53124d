import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** The palette's contract: every text token is readable (WCAG AA, 4.5:1) on every surface it can sit on. */
const css = readFileSync(new URL("../src/styles.css", import.meta.url), "utf8");

function tokens(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of block.matchAll(/--(ly-[\w-]+):\s*(#[0-9a-fA-F]{6})\s*;/g))
    out[m[1] as string] = m[2] as string;
  return out;
}

const lightBlock = css.slice(css.indexOf(":root {"), css.indexOf("}", css.indexOf(":root {")));
const darkStart = css.indexOf(":root {", css.indexOf("prefers-color-scheme: dark"));
const darkBlock = css.slice(darkStart, css.indexOf("}", darkStart));
const light = tokens(lightBlock);
const dark = { ...light, ...tokens(darkBlock) };

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const SURFACES = ["ly-bg", "ly-surface", "ly-surface-2"];
const TONES = ["ok", "warn", "bad", "info"];

describe.each([
  ["light", light],
  ["dark", dark],
])("palette, %s scheme", (_scheme, t) => {
  const get = (name: string) => {
    const v = t[name];
    if (!v) throw new Error(`missing token --${name}`);
    return v;
  };
  it.each(["ly-text", "ly-muted", "ly-accent", ...TONES.map((x) => `ly-${x}`)])(
    "%s is at least 4.5:1 on every surface",
    (fg) => {
      for (const bg of SURFACES)
        expect(contrast(get(fg), get(bg)), `${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
    },
  );
  it.each(TONES)("tone %s text is at least 4.5:1 on its own background", (tone) => {
    expect(contrast(get(`ly-${tone}`), get(`ly-${tone}-bg`))).toBeGreaterThanOrEqual(4.5);
  });
  it("accent buttons and instance chips keep their text at 4.5:1", () => {
    expect(contrast(get("ly-accent-text"), get("ly-accent"))).toBeGreaterThanOrEqual(4.5);
    for (const i of [0, 1, 2, 3])
      expect(contrast(get("ly-series-text"), get(`ly-series-${i}`))).toBeGreaterThanOrEqual(4.5);
  });
});
