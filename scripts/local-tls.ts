/**
 * @module
 * The certificate `TLS=1 npm start` serves: made once per state directory (in its `tls/`) and
 * reused until a day before it expires, so a CA a user passed to kubectl or trusted stays valid
 * across restarts. Its CA signs for 127.0.0.1 and localhost only, and its key is gone once the
 * server certificate is signed (scripts/certificates.ts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeCertificates, type Certificates } from "./certificates.ts";

const HOSTS = ["127.0.0.1", "localhost"];
const DAYS = 90;

/** Whether `file` is a certificate still valid a day from now. */
function freshFor(file: string): boolean {
  try {
    execFileSync("openssl", ["x509", "-checkend", "86400", "-noout", "-in", file], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function read(dir: string): Certificates {
  return { caFile: join(dir, "ca.crt"), key: readFileSync(join(dir, "server.key"), "utf8"), cert: readFileSync(join(dir, "server.crt"), "utf8") };
}

/** The certificate in `stateDir/tls`, made (or remade, when it is about to expire) if need be. */
export function localCertificate(stateDir: string): Certificates & { made: boolean } {
  const dir = join(stateDir, "tls");
  const usable = () => ["ca.crt", "server.key"].every((f) => existsSync(join(dir, f))) && freshFor(join(dir, "server.crt"));
  if (usable()) return { ...read(dir), made: false };
  mkdirSync(stateDir, { recursive: true });
  // Made aside and moved in whole, so relays starting at the same moment (sharing a state
  // directory, as simulated clusters' relays do) never read half a set, and all use one.
  const fresh = mkdtempSync(join(stateDir, "tls-"));
  try {
    makeCertificates(fresh, { hosts: HOSTS, days: DAYS, caName: "kube-watch-relay local CA (127.0.0.1, localhost)" });
    try {
      renameSync(fresh, dir);
      return { ...read(dir), made: true };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw e;
    }
    if (usable()) return { ...read(dir), made: false }; // another relay's, made meanwhile
    rmSync(dir, { recursive: true, force: true }); // expiring: replace it
    renameSync(fresh, dir);
    return { ...read(dir), made: true };
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}
