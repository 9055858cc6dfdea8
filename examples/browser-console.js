// A live map of the pods in `default`, from a browser. The relay serves its client at
// /client.js: open the relay's page (http://127.0.0.1:8787/ with `npm start`), open the
// developer tools' console, and paste this. In an app, install the client package, `import {
// informer } from "@kube-watch-relay/client"` and let your bundler include it.
const { informer } = await import("/client.js");

const pods = informer("/api/v1/namespaces/default/pods", {
  onAdd: (pod) => console.log("added", pod.metadata.name),
  onUpdate: (pod, before) => console.log("updated", pod.metadata.name, before.status?.phase, "→", pod.status?.phase),
  onDelete: (pod) => console.log("deleted", pod.metadata.name),
  onStatus: (status) => console.log("watch:", status.type, status),
});
await pods.synced;
console.table([...pods.objects.values()].map((pod) => ({ name: pod.metadata.name, phase: pod.status?.phase, rv: pod.metadata.resourceVersion })));
// Later: pods.stop();
