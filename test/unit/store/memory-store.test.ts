/** @module The shared store contract run against the in-memory store. */
import { createMemoryStore } from '../../../agent/store/index.js';
import { runStoreSuite } from './store-suite.js';

runStoreSuite('memory store', (options) => {
  const store = createMemoryStore(options);
  return Promise.resolve({ store, dispose: () => store.close() });
});
