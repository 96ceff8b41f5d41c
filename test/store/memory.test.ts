import { MemoryStore } from '../../src/store/memory.js';
import { describeStoreConformance } from '../conformance/store.suite.js';

describeStoreConformance('memory', {
  fresh: async () => new MemoryStore(),
  inlineSize: async (store, runId, seq) => (store as MemoryStore).inlineSize(runId, seq),
});
