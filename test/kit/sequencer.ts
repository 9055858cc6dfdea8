/**
 * @module
 * vitest's order, but a group's longest file first. vitest orders a group's files by project
 * name before anything else, so the soak, a project of its own beside the end-to-end files,
 * would start after all of them and end the group alone, minutes after the rest.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Files that start first in their group (test/worker/soak.test.ts: about four minutes). */
export const FIRST_IN_GROUP = ["test/worker/soak.test.ts"];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (spec: TestSpecification) => FIRST_IN_GROUP.some((file) => spec.moduleId.endsWith(`/${file}`));
    // Stable: the groups' order and vitest's order within them stay; only the named files move up.
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder || Number(first(b.spec)) - Number(first(a.spec)) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
