/**
 * @module
 * vitest's order, but a group's longest files first, longest of all first. vitest orders a
 * group's files by project name before anything else, so the soak, a project of its own beside
 * the end-to-end files, would start after all of them and end the group alone, minutes after the
 * rest; and in a group that runs two files at a time, a long file started last ends it alone.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files that start first in their group, in this order (the soak: about four minutes; then the
 * Workers files that run two at a time, about 45, 40, 35, 30 and 20 s).
 */
export const FIRST_IN_GROUP = [
  "test/worker/soak.test.ts",
  "test/worker/lifecycle.test.ts",
  "test/worker/fleet.test.ts",
  "test/worker/faults.test.ts",
  "test/worker-jwt/auth.test.ts",
  "test/worker/cold.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = FIRST_IN_GROUP.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return at === -1 ? FIRST_IN_GROUP.length : at;
    };
    // Stable: the groups' order and vitest's order within them stay; only the named files move up.
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder || rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
