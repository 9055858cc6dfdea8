/**
 * @module
 * The users `AUTH_MODE=kube npm start` makes in its simulated cluster, so kube mode can be
 * tried without reading the simulator's source: one who may read pods and Events in one
 * namespace, one who may read everything. Their tokens are new on every start; the relay
 * never sees them until a client presents one, and asks the cluster about them as it would
 * about any token.
 */
import { randomBytes } from "node:crypto";
import type { User } from "../src/sim/index.ts";

export interface DemoUser extends User {
  /** What the user may read, in words. */
  may: string;
  /** A namespace the user may read pods in, and whether across all namespaces too. */
  namespace: string;
  everywhere: boolean;
}

const READ = ["get", "list", "watch"];
const token = (name: string) => `sim-${name}-${randomBytes(18).toString("base64url")}`;

export function demoUsers(): DemoUser[] {
  return [
    {
      name: "alice",
      tokens: [token("alice")],
      rules: [{ verbs: READ, apiGroups: [""], resources: ["pods", "events"], namespaces: ["team-a"] }],
      may: "pods and Events in team-a, nothing else",
      namespace: "team-a",
      everywhere: false,
    },
    {
      name: "bob",
      tokens: [token("bob")],
      rules: [{ verbs: READ, apiGroups: ["*"], resources: ["*"] }],
      may: "everything, in every namespace (but Secrets, which the relay never relays)",
      namespace: "team-a",
      everywhere: true,
    },
  ];
}
