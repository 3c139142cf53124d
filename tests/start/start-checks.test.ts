// What `npm start` refuses before it provisions or builds anything: a .env line it cannot read as written, and
// ports two services would share.
import { describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { dotenvProblem } from "../../scripts/lib/dotenv-check.mjs";
// @ts-expect-error plain .mjs helper without types
import { startPorts } from "../../scripts/lib/start-ports.mjs";

describe(".env lines", () => {
  it("accepts KEY=VALUE, export, comments, blanks and closed quotes", () => {
    const text = [
      "# a comment",
      "",
      "WEB_PORT=3000",
      "export API_PORTS=4001,4002",
      'ADMIN_TOKEN="a b#c" # why',
      "LOG_LEVEL='info'",
      "EMPTY=",
      "  INDENTED = x",
      "",
    ].join("\n");
    expect(dotenvProblem(text)).toBeNull();
  });

  it("names the line that would swallow the next setting", () => {
    expect(dotenvProblem("WEB_PORT=3000\ngarbage line\nLOCK_LEASE_MS=5000\n")).toMatch(
      /^line 2 \("garbage line"\) is not KEY=VALUE/,
    );
    expect(dotenvProblem("1BAD=x")).toMatch(/^line 1 /);
  });

  it("names an unclosed quote, which Node would keep in the value", () => {
    expect(dotenvProblem('WEB_PORT=3000\nADMIN_TOKEN="abc\nLOG_LEVEL=info')).toMatch(
      /^line 2 .* opens a " quote it never closes/,
    );
    expect(dotenvProblem("A='x' y")).toMatch(/after its closing ' quote/);
  });
});

describe("WEB_PORT and API_PORTS", () => {
  it("defaults, and a list of API ports", () => {
    expect(startPorts({})).toEqual({ apiPorts: [4001, 4002], webPort: 3000 });
    expect(startPorts({ API_PORTS: "17321, 17322,17323", WEB_PORT: "17320" })).toEqual({
      apiPorts: [17321, 17322, 17323],
      webPort: 17320,
    });
  });

  it("refuses a port twice, the dashboard on an API's port, and more than one dashboard port", () => {
    expect(() => startPorts({ API_PORTS: "17321,17321" })).toThrow(/lists port 17321 twice/);
    expect(() => startPorts({ API_PORTS: "17321,17322", WEB_PORT: "17322" })).toThrow(
      /WEB_PORT=17322 is also in API_PORTS/,
    );
    expect(() => startPorts({ WEB_PORT: "17320,17325" })).toThrow(/set WEB_PORT to a single port/);
  });

  it("refuses what is not a port", () => {
    for (const bad of ["abc", "0", "65536", "4001,", "1e3", "0x10"])
      expect(() => startPorts({ API_PORTS: bad }), bad).toThrow(/is not a list of ports/);
  });
});
