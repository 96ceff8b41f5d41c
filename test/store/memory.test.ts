import { MemoryRunStore } from '../../src/store/memory.js';
import { describeStoreConformance } from '../conformance/store.suite.js';

describeStoreConformance('memory', {
  fresh: async () => new MemoryRunStore(),
  inlineSize: async (store, runId, seq) => (store as MemoryRunStore).inlineSize(runId, seq),
});
