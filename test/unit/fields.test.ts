import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FieldRequirement, type FieldSelector, fieldsOf, formatFieldSelector, matchesFields, parseFieldSelector, supportedFieldLabels, validateFieldSelector } from "../../src/k8s/fields.ts";
import { SelectorError } from "../../src/k8s/labels.ts";

function errorOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(SelectorError);
    return (e as SelectorError).message;
  }
}

const canonical = (input: string, group = "", resource = "pods", namespaced = true): string => formatFieldSelector(validateFieldSelector(parseFieldSelector(input), group, resource, namespaced));
const rejection = (input: string, group: string, resource: string, namespaced = true): string | undefined =>
  errorOf(() => validateFieldSelector(parseFieldSelector(input), group, resource, namespaced));

describe("parseFieldSelector", () => {
  it("treats an empty selector as everything", () => {
    expect(parseFieldSelector("")).toEqual({ requirements: [] });
  });

  it("parses =, == and != terms, in upstream's sorted term order", () => {
    expect(parseFieldSelector("status.phase!=Running,metadata.name==a,spec.nodeName=n1").requirements).toEqual([
      { field: "metadata.name", operator: "=", value: "a" },
      { field: "spec.nodeName", operator: "=", value: "n1" },
      { field: "status.phase", operator: "!=", value: "Running" },
    ]);
  });

  it("skips empty terms, and drops a term with neither field nor value as upstream does", () => {
    expect(parseFieldSelector("a=1,,b=2,").requirements.map((r) => r.field)).toEqual(["a", "b"]);
    expect(parseFieldSelector("=").requirements).toEqual([]);
    expect(parseFieldSelector("!=,==").requirements).toEqual([]);
    expect(parseFieldSelector("=x").requirements).toEqual([{ field: "", operator: "=", value: "x" }]);
  });

  it("unescapes values, and splits at the first operator without escaping the field", () => {
    expect(parseFieldSelector("a=x\\,y\\=z\\\\,b!=").requirements).toEqual([
      { field: "a", operator: "=", value: "x,y=z\\" },
      { field: "b", operator: "!=", value: "" },
    ]);
    expect(parseFieldSelector("a==b").requirements).toEqual([{ field: "a", operator: "=", value: "b" }]);
    expect(parseFieldSelector("a!b=c").requirements).toEqual([{ field: "a!b", operator: "=", value: "c" }]);
    expect(parseFieldSelector(" a = b ").requirements).toEqual([{ field: " a ", operator: "=", value: " b " }]);
  });

  it("reports upstream's messages", () => {
    expect(errorOf(() => parseFieldSelector("foo"))).toBe("invalid selector: 'foo'; can't understand 'foo'");
    // Terms are checked in sorted order, so `a` fails before `z`.
    expect(errorOf(() => parseFieldSelector("z,a"))).toBe("invalid selector: 'z,a'; can't understand 'a'");
    expect(errorOf(() => parseFieldSelector(" "))).toBe("invalid selector: ' '; can't understand ' '");
    expect(errorOf(() => parseFieldSelector("a in (b)"))).toBe("invalid selector: 'a in (b)'; can't understand 'a in (b)'");
    // Go prints the offending rune with %v, i.e. as a number.
    expect(errorOf(() => parseFieldSelector("a=b=c"))).toBe("invalid field selector: unescaped character in value: 61");
    expect(errorOf(() => parseFieldSelector("a===b"))).toBe("invalid field selector: unescaped character in value: 61");
    expect(errorOf(() => parseFieldSelector("a=b\\x"))).toBe("invalid field selector: invalid escape sequence: \\x");
    expect(errorOf(() => parseFieldSelector("a=b\\"))).toBe("invalid field selector: invalid escape sequence: \\");
  });
});

describe("formatFieldSelector", () => {
  it("canonicalises metadata.name==x to metadata.name=x", () => {
    expect(canonical("metadata.name==x")).toBe("metadata.name=x");
  });

  it("sorts, deduplicates and re-escapes", () => {
    expect(canonical("status.phase!=Running,metadata.name=a\\,b,metadata.name==a\\,b,status.phase=Pending")).toBe("metadata.name=a\\,b,status.phase=Pending,status.phase!=Running");
    expect(formatFieldSelector({ requirements: [{ field: "f", operator: "=", value: "\\,=" }] })).toBe("f=\\\\\\,\\=");
  });

  it("writes nothing for an empty selector", () => {
    expect(formatFieldSelector({ requirements: [] })).toBe("");
  });

  it("refuses a field name that cannot be written back unambiguously", () => {
    for (const field of ["a=b", "a,b", "x!"]) {
      expect(() => formatFieldSelector({ requirements: [{ field, operator: "=", value: "v" }] })).toThrow(SelectorError);
    }
    expect(formatFieldSelector({ requirements: [{ field: "x!", operator: "!=", value: "v" }] })).toBe("x!!=v");
  });
});

describe("validateFieldSelector", () => {
  it("rejects foo on pods with upstream's message", () => {
    expect(rejection("foo=bar", "", "pods")).toBe("field label not supported: foo");
  });

  it("rewrites the legacy spec.host alias to spec.nodeName", () => {
    expect(canonical("spec.host=node-1")).toBe("spec.nodeName=node-1");
  });

  it("reports the first unsupported term in upstream's order", () => {
    expect(rejection("zeta=1,alpha=2", "", "pods")).toBe("field label not supported: alpha");
  });

  it("accepts metadata.namespace only on namespaced kinds of their own", () => {
    expect(rejection("metadata.namespace=x", "", "nodes")).toBe("field label not supported: metadata.namespace");
    expect(rejection("metadata.namespace=x", "", "namespaces")).toBe("field label not supported: metadata.namespace");
    expect(canonical("metadata.namespace=x", "", "secrets")).toBe("metadata.namespace=x");
  });

  it("uses each kind's wording", () => {
    expect(rejection("status.active=1", "batch", "jobs")).toBe('field label "status.active" not supported for Job');
    expect(rejection("spec.pool=p", "resource.k8s.io", "resourceslices")).toBe("field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool");
    // Built-ins without a conversion func of their own fall back to the metadata-only default.
    expect(rejection("status.replicas=1", "apps", "replicasets")).toBe('"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"');
    expect(rejection("spec.x=1", "rbac.authorization.k8s.io", "clusterroles")).toBe('"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });

  it("treats an unknown resource as a custom resource", () => {
    expect(canonical("metadata.namespace=x,metadata.name=y", "example.com", "widgets", true)).toBe("metadata.name=y,metadata.namespace=x");
    expect(rejection("metadata.namespace=x", "example.com", "gadgets", false)).toBe("field label not supported: metadata.namespace");
    expect(rejection("spec.size=1", "example.com", "widgets", true)).toBe("field label not supported: spec.size");
  });

  it("knows the built-in field labels", () => {
    expect(supportedFieldLabels("", "pods", true)).toEqual([
      "metadata.name",
      "metadata.namespace",
      "spec.nodeName",
      "spec.restartPolicy",
      "spec.schedulerName",
      "spec.serviceAccountName",
      "spec.hostNetwork",
      "status.phase",
      "status.podIP",
      "status.podIPs",
      "status.nominatedNodeName",
      "spec.host",
    ]);
    expect(supportedFieldLabels("", "nodes", false)).toEqual(["metadata.name", "spec.unschedulable"]);
    expect(supportedFieldLabels("", "namespaces", false)).toEqual(["status.phase", "metadata.name"]);
    expect(supportedFieldLabels("", "secrets", true)).toEqual(["type", "metadata.name", "metadata.namespace"]);
    expect(supportedFieldLabels("", "services", true)).toEqual(["metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"]);
    expect(supportedFieldLabels("", "replicationcontrollers", true)).toContain("status.replicas");
    expect(supportedFieldLabels("batch", "jobs", true)).toEqual(["metadata.name", "metadata.namespace", "status.successful"]);
    expect(supportedFieldLabels("certificates.k8s.io", "certificatesigningrequests", false)).toEqual(["metadata.name", "spec.signerName"]);
    expect(supportedFieldLabels("apps", "replicasets", true)).toEqual(["metadata.name", "metadata.namespace"]);
    expect(supportedFieldLabels("rbac.authorization.k8s.io", "clusterroles", false)).toEqual(["metadata.name", "metadata.namespace"]);
    expect(supportedFieldLabels("example.com", "widgets", false)).toEqual(["metadata.name"]);
  });

  it("keeps each events API's own spellings", () => {
    expect(supportedFieldLabels("", "events", true)).toEqual([
      "involvedObject.kind",
      "involvedObject.namespace",
      "involvedObject.name",
      "involvedObject.uid",
      "involvedObject.apiVersion",
      "involvedObject.resourceVersion",
      "involvedObject.fieldPath",
      "reason",
      "reportingComponent",
      "source",
      "type",
      "metadata.name",
      "metadata.namespace",
    ]);
    expect(canonical("regarding.name=web,reportingController=kubelet", "events.k8s.io", "events")).toBe("regarding.name=web,reportingController=kubelet");
    expect(rejection("involvedObject.name=web", "events.k8s.io", "events")).toBe("field label not supported: involvedObject.name");
  });
});

describe("fieldsOf and matchesFields", () => {
  it("reads a pod's selectable fields, with missing values as empty", () => {
    const pod = {
      metadata: { name: "web-0", namespace: "prod" },
      spec: { restartPolicy: "Always", schedulerName: "default-scheduler", serviceAccount: "legacy", hostNetwork: true },
      status: { phase: "Pending", podIPs: [{ ip: "10.0.0.7" }, { ip: "fd00::7" }] },
    };
    expect(fieldsOf("", "pods", pod)).toEqual({
      "metadata.name": "web-0",
      "metadata.namespace": "prod",
      "spec.nodeName": "",
      "spec.restartPolicy": "Always",
      "spec.schedulerName": "default-scheduler",
      "spec.serviceAccountName": "legacy",
      "spec.hostNetwork": "true",
      "status.phase": "Pending",
      "status.podIP": "10.0.0.7",
      "status.nominatedNodeName": "",
    });
    const unscheduled = validateFieldSelector(parseFieldSelector("spec.host="), "", "pods", true);
    expect(matchesFields(unscheduled, fieldsOf("", "pods", pod))).toBe(true);
    const onNode = validateFieldSelector(parseFieldSelector("spec.nodeName=n1"), "", "pods", true);
    expect(matchesFields(onNode, fieldsOf("", "pods", { ...pod, spec: { nodeName: "n1" } }))).toBe(true);
    // status.podIPs is accepted but never selectable upstream, so it only ever equals "".
    const byIPs = validateFieldSelector(parseFieldSelector("status.podIPs=10.0.0.7"), "", "pods", true);
    expect(matchesFields(byIPs, fieldsOf("", "pods", pod))).toBe(false);
  });

  it("reads defaults for other kinds", () => {
    expect(fieldsOf("", "nodes", { metadata: { name: "n1" } })).toEqual({ "metadata.name": "n1", "spec.unschedulable": "false" });
    expect(fieldsOf("batch", "jobs", { metadata: { name: "j" }, status: { succeeded: 3 } })["status.successful"]).toBe("3");
    expect(fieldsOf("", "replicationcontrollers", { metadata: { name: "rc" } })["status.replicas"]).toBe("0");
    expect(fieldsOf("", "secrets", { metadata: { name: "s", namespace: "d" }, type: "Opaque" })).toEqual({
      type: "Opaque",
      "metadata.name": "s",
      "metadata.namespace": "d",
    });
    expect(fieldsOf("example.com", "widgets", { metadata: { name: "w" } })).toEqual({ "metadata.name": "w", "metadata.namespace": "" });
    expect(fieldsOf("", "pods", null)["spec.hostNetwork"]).toBe("false");
  });

  it("reads core and events.k8s.io events from their own wire formats", () => {
    const core = {
      metadata: { name: "e1", namespace: "d" },
      involvedObject: { kind: "Pod", name: "web-0", namespace: "d", uid: "u1" },
      reason: "Started",
      reportingComponent: "kubelet",
      type: "Normal",
    };
    const coreFields = fieldsOf("", "events", core);
    expect(coreFields["involvedObject.name"]).toBe("web-0");
    expect(coreFields.source).toBe("kubelet"); // source.component falls back to reportingComponent
    expect(fieldsOf("", "events", { ...core, source: { component: "sched" } }).source).toBe("sched");
    const v1 = { metadata: { name: "e1", namespace: "d" }, regarding: { kind: "Pod", name: "web-0" }, reportingController: "kubelet" };
    const v1Fields = fieldsOf("events.k8s.io", "events", v1);
    expect(v1Fields["regarding.name"]).toBe("web-0");
    expect(v1Fields.reportingController).toBe("kubelet");
    expect(v1Fields.source).toBe("kubelet");
    const selector = validateFieldSelector(parseFieldSelector("regarding.kind=Pod,regarding.name=web-0"), "events.k8s.io", "events", true);
    expect(matchesFields(selector, v1Fields)).toBe(true);
  });

  it("reads an absent field as empty and ANDs requirements", () => {
    const selector = parseFieldSelector("a=,b!=x");
    expect(matchesFields(selector, {})).toBe(true);
    expect(matchesFields(selector, { a: "1" })).toBe(false);
    expect(matchesFields(selector, { b: "x" })).toBe(false);
    expect(matchesFields(parseFieldSelector("constructor="), {})).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

// Field names a parse can produce, including the awkward ones (`!` inside, a trailing `\`).
const fieldArb = fc.constantFrom("metadata.name", "spec.nodeName", "status.phase", "a!b", "x\\", "\\,y");
const valueArb = fc.string({ unit: fc.constantFrom("\\", ",", "=", "!", " ", "a", "b", "é", "😀", "\u0000"), maxLength: 6 });
const requirementArb: fc.Arbitrary<FieldRequirement> = fc.record({
  field: fieldArb,
  operator: fc.constantFrom("=" as const, "!=" as const),
  value: valueArb,
});
const selectorArb: fc.Arbitrary<FieldSelector> = fc.array(requirementArb, { maxLength: 5 }).map((requirements) => ({ requirements }));
const fieldMapArb = fc.dictionary(fieldArb, fc.oneof(valueArb, fc.constantFrom("", "a", "b")), { maxKeys: 6 });

describe("field selector properties", () => {
  it("formats idempotently: format(parse(format(s))) = format(s)", () => {
    fc.assert(
      fc.property(selectorArb, (s) => {
        const once = formatFieldSelector(s);
        expect(formatFieldSelector(parseFieldSelector(once))).toBe(once);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it("parses the canonical form to a selector matching the same field maps", () => {
    fc.assert(
      fc.property(selectorArb, fc.array(fieldMapArb, { minLength: 1, maxLength: 8 }), (s, maps) => {
        const reparsed = parseFieldSelector(formatFieldSelector(s));
        for (const fields of maps) expect(matchesFields(reparsed, fields)).toBe(matchesFields(s, fields));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it("round-trips arbitrary values through escaping", () => {
    const anyValue = fc.oneof(valueArb, fc.string({ unit: "binary", maxLength: 12 }));
    fc.assert(
      fc.property(fieldArb, fc.constantFrom("=" as const, "!=" as const), anyValue, (field, operator, value) => {
        const text = formatFieldSelector({ requirements: [{ field, operator, value }] });
        expect(parseFieldSelector(text).requirements).toEqual([{ field, operator, value }]);
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it("either parses or throws SelectorError for arbitrary input", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "=", "!", ",", "\\", " "), maxLength: 10 }), (input) => {
        let parsed: FieldSelector;
        try {
          parsed = parseFieldSelector(input);
        } catch (e) {
          expect(e).toBeInstanceOf(SelectorError);
          return;
        }
        const once = formatFieldSelector(parsed);
        expect(formatFieldSelector(parseFieldSelector(once))).toBe(once);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});
