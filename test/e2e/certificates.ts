/**
 * @module
 * Certificates for tests of HTTPS upstreams, made with openssl (tests that need them skip,
 * loudly, without it): a private CA, and a server certificate it signed for 127.0.0.1.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
export const opensslPresent = hasOpenssl();

/** A CA, and a server certificate it signed for 127.0.0.1 (P-256 keys: fast to make), in `dir`. */
export function makeCertificates(dir: string): { caFile: string; key: string; cert: string } {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=kube-watch-relay test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  run("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "server.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n");
  run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "1", "-extfile", "server.ext");
  return { caFile: join(dir, "ca.crt"), key: readFileSync(join(dir, "server.key"), "utf8"), cert: readFileSync(join(dir, "server.crt"), "utf8") };
}
