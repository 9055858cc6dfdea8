/**
 * @module
 * Pod logs from the simulated API server, as the API server and the kubelet serve them: the
 * options and their errors, the container to read, tail/since/limit, timestamps, follow until
 * the container stops, and a restarted container's previous log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "kubernetes-types/core/v1.js";
import { lineTimestamp } from "../../src/k8s/rfc3339.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { LOG_INTERVAL_ANNOTATION } from "../../src/sim/logs.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { timestamp } from "../../src/sim/meta.ts";
import { LineReader } from "../kit/lines.ts";
import { eventually } from "../kit/wait.ts";
import { request } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 5 });
});
afterAll(async () => {
  await sim.close();
});

interface RunningPodOptions {
  containers?: string[];
  startedAgoMs?: number;
  intervalMs?: number;
}

/** A scheduled pod whose containers run since `startedAgoMs` ago, writing a line every `intervalMs`. */
function runningPod(namespace: string, name: string, { containers = ["main"], startedAgoMs = 3000, intervalMs = 50 }: RunningPodOptions = {}): KubeObject {
  const startedAt = timestamp(Date.now() - startedAgoMs);
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, annotations: { [LOG_INTERVAL_ANNOTATION]: String(intervalMs) } },
    spec: { nodeName: "node-1", containers: containers.map((c) => ({ name: c, image: "busybox:1.36" })) },
    status: {
      phase: "Running",
      containerStatuses: containers.map((c, i) => ({
        name: c,
        state: { running: { startedAt } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: "busybox:1.36",
        imageID: "",
        containerID: `containerd://${name}-${c}-${i}`,
        started: true,
      })),
    },
  };
  return sim.create("pods", pod as KubeObject);
}

/** The container restarted now: what ran is its last state, a new run has begun. */
function restart(namespace: string, name: string, container = "main"): void {
  const pod = sim.get("pods", namespace, name) as Pod;
  const at = timestamp(Date.now());
  const statuses = (pod.status?.containerStatuses ?? []).map((s) =>
    s.name !== container
      ? s
      : {
          ...s,
          lastState: { terminated: { exitCode: 137, reason: "OOMKilled", startedAt: s.state?.running?.startedAt, finishedAt: at, containerID: s.containerID } },
          state: { running: { startedAt: at } },
          restartCount: s.restartCount + 1,
          containerID: `${s.containerID}-r${s.restartCount + 1}`,
        },
  );
  sim.patch("pods", namespace, name, { status: { containerStatuses: statuses } });
}

const log = (path: string) => request(`${sim.url}/api/v1/namespaces/${path}`);
const lines = (text: string) => text.split("\n").slice(0, -1);

describe("pod logs", () => {
  it("a running container's log: its lines in order, with their timestamps on request, the same on every read", async () => {
    runningPod("default", "logs-plain");
    const plain = await log("default/pods/logs-plain/log");
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/plain");
    const read = lines(plain.text);
    expect(read.length).toBeGreaterThan(10);
    expect(read[0]).toMatch(/^level=info msg="starting" container=main/);

    const stamped = lines((await log("default/pods/logs-plain/log?timestamps=true")).text);
    const times = stamped.map((l) => lineTimestamp(new TextEncoder().encode(l))!.nanos);
    expect([...times].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
    // Without timestamps, the same lines: the stamped read is a later read, so it may hold more.
    expect(stamped.slice(0, read.length).map((l) => l.slice(l.indexOf(" ") + 1))).toEqual(read);
  });

  it("tailLines, sinceSeconds, sinceTime and limitBytes, as the kubelet applies them", async () => {
    runningPod("default", "logs-options", { startedAgoMs: 6000, intervalMs: 100 });
    // The tail first: lines keep being written, so the whole log read after it holds the tail's.
    const tail = lines((await log("default/pods/logs-options/log?tailLines=3&timestamps=true")).text);
    const all = lines((await log("default/pods/logs-options/log?timestamps=true")).text);
    expect(tail).toHaveLength(3);
    expect(all).toEqual(expect.arrayContaining(tail));
    expect((await log("default/pods/logs-options/log?tailLines=0")).text).toBe("");

    const recent = lines((await log("default/pods/logs-options/log?sinceSeconds=2&timestamps=true")).text);
    const cutoff = BigInt(Date.now() - 2000 - 200) * 1_000_000n;
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThan(all.length);
    for (const line of recent) expect(lineTimestamp(new TextEncoder().encode(line))!.nanos >= cutoff).toBe(true);

    // sinceTime goes to the kubelet to the second: lines from the start of that second.
    const third = all[20]!;
    const second = third.slice(0, 19);
    const since = lines((await log(`default/pods/logs-options/log?timestamps=true&sinceTime=${second}.999Z`)).text);
    expect(since[0]!.startsWith(second)).toBe(true);
    expect(all.indexOf(since[0]!)).toBe(all.findIndex((l) => l.startsWith(second)));

    const limited = await log("default/pods/logs-options/log?limitBytes=50");
    expect(Buffer.byteLength(limited.text)).toBe(50);
    expect(
      all
        .map((l) => l.slice(l.indexOf(" ") + 1))
        .join("\n")
        .startsWith(limited.text),
    ).toBe(true);
  });

  it("follow: the log so far, then each line as it is written, until the container stops; its previous log is what was followed", async () => {
    runningPod("default", "logs-follow", { startedAgoMs: 1500, intervalMs: 40 });
    const response = await fetch(`${sim.url}/api/v1/namespaces/default/pods/logs-follow/log?follow=true&timestamps=true`);
    expect(response.status).toBe(200);
    const reader = new LineReader(response.body!);
    await eventually(() => reader.lines.length > 40, "40 lines followed");
    expect(sim.stats().activeLogFollows).toEqual([{ path: "/api/v1/namespaces/default/pods/logs-follow/log", container: "main", previous: false }]);
    restart("default", "logs-follow");
    const end = await reader.ended;
    expect(end.error).toBeUndefined();
    expect(reader.lines.at(-1)).toMatch(/ level=error msg="exiting" code=137 reason=OOMKilled$/);
    const previous = lines((await log("default/pods/logs-follow/log?previous=true&timestamps=true")).text);
    expect(previous).toEqual(reader.lines);
    // The new run's log starts afresh.
    const current = await eventually(async () => lines((await log("default/pods/logs-follow/log")).text)[0], "the new run's first line");
    expect(current).toMatch(/^level=info msg="starting" container=main id=.*-r1$/);
    expect(sim.stats().activeLogFollows).toEqual([]);
  });

  it("errors as the API server and the kubelet word them", async () => {
    runningPod("default", "logs-two", { containers: ["app", "sidecar"] });
    const expectStatus = async (path: string, code: number, message: string) => {
      const answer = await log(path);
      expect([answer.status, answer.body?.code, answer.body?.message]).toEqual([code, code, message]);
      return answer.body;
    };
    await expectStatus("default/pods/nope/log", 404, 'pods "nope" not found');
    await expectStatus("default/pods/logs-two/log", 400, "a container name must be specified for pod logs-two, choose one of: [app sidecar]");
    await expectStatus("default/pods/logs-two/log?container=db", 400, "container db is not valid for pod logs-two");
    await expectStatus("default/pods/logs-two/log?container=app&previous=true", 400, 'previous terminated container "app" in pod "logs-two" not found');
    await expectStatus("default/pods/logs-two/log?tailLines=ten", 400, 'strconv.ParseInt: parsing "ten": invalid syntax');
    await expectStatus("default/pods/logs-two/log?sinceTime=yesterday", 400, 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"');
    const invalid = await expectStatus(
      "default/pods/logs-two/log?tailLines=-1&limitBytes=0&sinceSeconds=0",
      422,
      'PodLogOptions "logs-two" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0, sinceSeconds: Invalid value: 0: must be greater than 0]',
    );
    expect(invalid.details).toEqual({
      name: "logs-two",
      kind: "PodLogOptions",
      causes: [
        { reason: "FieldValueInvalid", message: "Invalid value: -1: must be greater than or equal to 0", field: "tailLines" },
        { reason: "FieldValueInvalid", message: "Invalid value: 0: must be greater than 0", field: "limitBytes" },
        { reason: "FieldValueInvalid", message: "Invalid value: 0: must be greater than 0", field: "sinceSeconds" },
      ],
    });
    await expectStatus(
      "default/pods/logs-two/log?container=app&sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z",
      422,
      'PodLogOptions "logs-two" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
    );

    sim.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "logs-pending", namespace: "default" },
      spec: { nodeName: "node-1", containers: [{ name: "main", image: "x" }] },
      status: { phase: "Pending", containerStatuses: [{ name: "main", state: { waiting: { reason: "ContainerCreating" } }, lastState: {}, ready: false, restartCount: 0, image: "x", imageID: "" }] },
    } as KubeObject);
    await expectStatus("default/pods/logs-pending/log", 400, 'container "main" in pod "logs-pending" is waiting to start: ContainerCreating');
  });

  it("churned pods write logs, and a restart leaves a previous one", async () => {
    const pod = sim.list("pods", "team-a")[0]!;
    const seeded = lines((await log(`team-a/pods/${pod.metadata!.name}/log`)).text);
    expect(seeded.length).toBeGreaterThan(0);
    expect(seeded.length).toBeLessThanOrEqual(5000);
    runningPod("default", "logs-restarted");
    restart("default", "logs-restarted");
    const previous = lines((await log("default/pods/logs-restarted/log?previous=true")).text);
    expect(previous[0]).toMatch(/^level=info msg="starting"/);
    expect(previous.at(-1)).toBe('level=error msg="exiting" code=137 reason=OOMKilled');
  });
});
