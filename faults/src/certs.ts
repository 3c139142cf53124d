import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface TestCerts {
  dir: string;
  ca: string;
  cert: string;
  key: string;
  remove(): void;
}

/** A throwaway CA and a server certificate for 127.0.0.1, made with openssl for this run only. */
export function makeCerts(): TestCerts {
  const dir = mkdtempSync(path.join(tmpdir(), "lockyard-tls-"));
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  ssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    f("ca.key"),
    "-out",
    f("ca.crt"),
    "-days",
    "1",
    "-subj",
    "/CN=lockyard test CA",
  );
  ssl("req", ...ec, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=127.0.0.1");
  writeFileSync(f("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  ssl(
    "x509",
    "-req",
    "-in",
    f("server.csr"),
    "-CA",
    f("ca.crt"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-out",
    f("server.crt"),
    "-days",
    "1",
    "-extfile",
    f("san.ext"),
  );
  return {
    dir,
    ca: f("ca.crt"),
    cert: f("server.crt"),
    key: f("server.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
