import { describe, expect, it } from "vitest";
import { simClusterNames } from "../../scripts/demo-cluster.ts";

describe("SIM_CLUSTERS", () => {
  it("names more simulated clusters, commas and spaces as a person types them", () => {
    expect(simClusterNames(undefined)).toEqual([]);
    expect(simClusterNames("")).toEqual([]);
    expect(simClusterNames("east,west")).toEqual(["east", "west"]);
    expect(simClusterNames(" east , west-2 ,")).toEqual(["east", "west-2"]);
  });

  it("refuses, saying what to write, a name that is not a cluster's, the first cluster's own, or one twice", () => {
    expect(() => simClusterNames("East")).toThrow(/"East" is not a cluster name .*SIM_CLUSTERS=east,west/);
    expect(() => simClusterNames("a,b/c")).toThrow(/"b\/c" is not a cluster name/);
    expect(() => simClusterNames("*")).toThrow(/"\*" is not a cluster name/);
    expect(() => simClusterNames("default")).toThrow(/"default" is the first simulated cluster already/);
    expect(() => simClusterNames("east,east")).toThrow(/a name is there twice/);
  });
});
