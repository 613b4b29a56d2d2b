// @ts-check
// theme.js's geometry: where the dialog goes so that it covers none of the theme's search boxes.
import assert from "node:assert/strict";
import { test } from "node:test";

import { topClearOfBoxes } from "../src/ui/theme.js";

const box = (/** @type {number} */ top, /** @type {number} */ left, width = 194, height = 42) =>
  ({ top, bottom: top + height, left, right: left + width, width, height });
const dialog = { top: 64, bottom: 736, left: 272, right: 1008 };

test("a search pill the dialog would cover puts the dialog below it (issue 44: pydata's second header row)", () => {
  assert.equal(topClearOfBoxes(dialog, [box(50, 188)], 320), 100); // half under the dialog's top-left corner
  assert.equal(topClearOfBoxes(dialog, [box(19, 1014)], 320), null); // beside it: nothing to do
  assert.equal(topClearOfBoxes(dialog, [box(0, 0, 0, 0), box(19, 300)], 320), null); // hidden copy; above it
  assert.equal(topClearOfBoxes(dialog, [box(500, 300)], 320), null); // not a header's: the dialog stays
  assert.equal(topClearOfBoxes(dialog, [box(40, 300), box(60, 600)], 320), 110); // below the lowest
  assert.equal(topClearOfBoxes({ ...dialog, top: 0 }, [box(50, 300)], 320), null); // full screen covers it whole
});
