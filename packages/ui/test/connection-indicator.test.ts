import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ConnectionIndicator } from "../src/connection-indicator";

describe("ConnectionIndicator", () => {
  it("says the API is up but Redis is not, instead of Live", () => {
    const html = renderToStaticMarkup(createElement(ConnectionIndicator, { state: "degraded" }));
    expect(html).toContain("API up, Redis unreachable");
    expect(html).toContain("ly-conn-degraded");
    expect(html).not.toContain("Live");
  });
});
