/**
 * @module
 * Certificates for tests of HTTPS upstreams (made with openssl, which such tests ask for with
 * `have("openssl", …)`): a private CA, and a server certificate it signed for 127.0.0.1, valid for a day.
 */
import { makeCertificates as make, type Certificates } from "../../scripts/certificates.ts";

export function makeCertificates(dir: string): Certificates {
  return make(dir, { hosts: ["127.0.0.1"], days: 1, caName: "kube-watch-relay test CA" });
}
