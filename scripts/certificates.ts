/**
 * @module
 * A private CA and a server certificate it signed, made with the openssl command (P-256 keys:
 * fast to make). `npm start` serves HTTPS with one (`local-tls.ts`); the tests make their own
 * for HTTPS upstreams.
 *
 * The CA can sign for nothing but the names it was made for (a critical name constraint), and
 * its key is deleted once the server certificate is signed: trusting this CA, even
 * machine-wide, vouches for those names alone, and nobody can make it sign anything again.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface CertificateOptions {
  /** Names the server certificate is for: IP addresses and DNS names. */
  hosts: string[];
  /** Validity of both certificates. */
  days: number;
  /** The CA's subject name. */
  caName: string;
}

export interface Certificates {
  /** The CA's certificate, PEM, in `dir` as `ca.crt`. */
  caFile: string;
  /** The server's key and certificate, PEM (in `dir` as `server.key` and `server.crt`). */
  key: string;
  cert: string;
}

const isIp = (host: string) => /^[\d.]+$/.test(host) || host.includes(":");

/** Make the CA and the server certificate in `dir` (which must exist); throws with openssl's message. */
export function makeCertificates(dir: string, options: CertificateOptions): Certificates {
  const run = (...args: string[]) => {
    try {
      execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    } catch (e) {
      throw new Error(`openssl ${args[0]} failed: ${String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim()}`);
    }
  };
  const days = String(options.days);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const names = options.hosts.map((h) => (isIp(h) ? `IP:${h}` : `DNS:${h}`)).join(",");
  const permitted = options.hosts.map((h) => (isIp(h) ? `permitted;IP:${h}/${h.includes(":") ? "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" : "255.255.255.255"}` : `permitted;DNS:${h}`)).join(",");
  run(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    days,
    "-subj",
    `/CN=${options.caName}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE,pathlen:0",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-addext",
    `nameConstraints=critical,${permitted}`,
  );
  run("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", `/CN=${options.hosts[0]}`);
  writeFileSync(join(dir, "server.ext"), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${names}\n`);
  run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", days, "-extfile", "server.ext");
  for (const file of ["ca.key", "ca.srl", "server.csr", "server.ext"]) rmSync(join(dir, file), { force: true });
  return { caFile: join(dir, "ca.crt"), key: readFileSync(join(dir, "server.key"), "utf8"), cert: readFileSync(join(dir, "server.crt"), "utf8") };
}
