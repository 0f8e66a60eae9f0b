import { join } from 'node:path';
import { expect, it } from 'vitest';
import { folderArrows, folderCycles } from '../../../scripts/import-graph.js';

it('has no folder cycle in the engine', () => {
  const arrows = folderArrows(join(import.meta.dirname, '../src'));
  expect(arrows.length).toBeGreaterThan(20);
  expect(folderCycles(arrows)).toEqual([]);
});
