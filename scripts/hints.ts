/**
 * @module
 * What `npm start` prints once the relay is ready: how to reach it, as commands that work when
 * pasted into a shell as printed (each on a line of its own, indented under a line that says
 * what it does). In `jwt` mode a token is minted first; in `kube` mode with the simulated
 * cluster, each demo user's token comes with a command its rights allow; with the simulated
 * cluster, its address and a write to make there, whose pods the watch shows. Over `https://`
 * (`TLS=1`) kubectl gets the CA, and the kubeconfig lines add the relay beside the reader's
 * clusters without switching the current context.
 */
import type { DemoUser } from "./demo-cluster.ts";

export interface HintContext {
  /** Where the relay serves: `http://127.0.0.1:8787`, or `https://` with `caFile`. */
  url: string;
  mode: "none" | "jwt" | "kube";
  /** The CA that signed the relay's certificate (`TLS=1`). */
  caFile?: string | undefined;
  /** `kube` mode's demo users, when the relay's cluster is the simulated one. */
  users?: DemoUser[] | undefined;
  /** The simulated cluster's address, when the relay relays it. */
  cluster?: string | undefined;
}

/** The write `npm start` suggests: team-a's pods, which every printed watch sees, change with it. */
export const DEMO_WRITE = "scale deploy/web -n team-a --replicas=6";

/** The name the relay gets in a kubeconfig: cluster, user and context alike. */
export const KUBECONFIG_NAME = "kube-watch-relay";

const command = (line: string) => `    ${line}`;

export function hints({ url, mode, caFile, users, cluster }: HintContext): string[] {
  const tokens = mode !== "none";
  const words = (...parts: Array<string | false>) => command(parts.filter((part) => part !== false).join(" "));
  const curl = (path: string, watch = false) => words("curl", watch && "-N", caFile !== undefined && `--cacert '${caFile}'`, tokens && '-H "Authorization: Bearer $TOKEN"', `'${url}${path}'`);
  const kubectl = (args: string) => words("kubectl", `--server ${url}`, caFile !== undefined && `--certificate-authority '${caFile}'`, tokens && '--token "$TOKEN"', args);
  // Without a token to send, kubectl works over http://; with one, only over https:// (it drops the token on http://).
  const kubectlWorks = !tokens || caFile !== undefined;
  const lines: string[] = [];
  // Where every token printed here may look: everywhere, except for kube mode's narrow demo user.
  let scope = { namespaced: "/api/v1/pods", args: "get pods -A" };

  if (mode === "jwt") {
    lines.push("  a token that may read everything, signed with the relay's AUTH_JWT_SECRET (which must be in your environment; `npm run -s token -- --help` for narrower ones):");
    lines.push(command("TOKEN=$(npm run -s token -- --sub you)"));
  } else if (mode === "kube" && users) {
    lines.push("  kube mode: the cluster decides what a token may read. The simulated cluster's demo users (new tokens at every start):");
    for (const user of users) {
      lines.push(`  ${user.name} may read ${user.may}:`);
      lines.push(command(`export TOKEN=${user.tokens[0]}`));
      if (kubectlWorks) lines.push(kubectl(user.everywhere ? "get pods -A" : `get pods -n ${user.namespace}`));
      else lines.push(curl(user.everywhere ? "/api/v1/namespaces" : `/api/v1/namespaces/${user.namespace}/pods`));
    }
    lines.push("  with either token:");
    scope = { namespaced: "/api/v1/namespaces/team-a/pods", args: "get pods -n team-a" };
  } else if (mode === "kube") {
    lines.push("  kube mode: TOKEN is a token of the cluster's (kubectl create token <serviceaccount>), which decides what it may read; for example:");
    scope = { namespaced: "/api/v1/namespaces/default/pods", args: "get pods -n default" };
  }

  if (mode === "none") lines.push(`  open ${url}/ in a browser${caFile ? " (which must trust the CA above)" : ""}, or try:`);
  else if (!(mode === "kube" && users)) lines.push("  then try:");
  lines.push(curl(`${scope.namespaced}?watch=1`, true));
  if (kubectlWorks) lines.push(kubectl(`${scope.args} -w`));
  if (tokens) {
    lines.push(`  the page, with the token: open the address this prints in a browser${caFile ? " (which must trust the CA above)" : ""}:`);
    lines.push(command(`echo "${url}/#token=$TOKEN"`));
  }
  if (!kubectlWorks) lines.push("  kubectl sends no token over http://: start the relay with TLS=1 for an https:// address kubectl can use");
  if (cluster) {
    lines.push(`  the simulated cluster is at ${cluster} and takes kubectl's writes (create, apply, scale, edit, delete...); make one there, and see its pods come through the watch above:`);
    lines.push(command(`kubectl --server ${cluster} ${DEMO_WRITE}`));
  }
  if (caFile) {
    lines.push(`  or add the relay to your kubeconfig beside your clusters (your current context stays as it is), and use it with --context ${KUBECONFIG_NAME}:`);
    lines.push(command(`kubectl config set-cluster ${KUBECONFIG_NAME} --server ${url} --certificate-authority '${caFile}' --embed-certs`));
    lines.push(command(`kubectl config set-credentials ${KUBECONFIG_NAME}${tokens ? ' --token "$TOKEN"' : ""}`));
    lines.push(command(`kubectl config set-context ${KUBECONFIG_NAME} --cluster ${KUBECONFIG_NAME} --user ${KUBECONFIG_NAME}`));
    lines.push(command(`kubectl --context ${KUBECONFIG_NAME} ${scope.args}`));
  }
  return lines;
}
