// The part of the browser's IndexedDB that ui/src/page-keys.ts uses (open with an upgrade, one object
// store keyed by a path, get/getAll/put/delete, transactions that complete), in memory, for the page's
// modules run under Node (which has WebCrypto, fetch and streams, but no IndexedDB). Values are kept as
// given: a CryptoKey stays the same object, as structured clone keeps it usable in a browser.

type Handler = (() => void) | null;

interface FakeRequest<T> {
  result: T;
  error: null;
  onsuccess: Handler;
  onerror: Handler;
  onupgradeneeded?: Handler;
}

function request<T>(compute: () => T, after: () => void = () => {}): FakeRequest<T> {
  const pending: FakeRequest<T> = { result: undefined as T, error: null, onsuccess: null, onerror: null };
  queueMicrotask(() => {
    pending.result = compute();
    pending.onsuccess?.();
    after();
  });
  return pending;
}

export function memoryIndexedDb() {
  const databases = new Map<string, Map<string, { keyPath: string; records: Map<string, unknown> }>>();
  const databaseOf = (stores: Map<string, { keyPath: string; records: Map<string, unknown> }>) => ({
    createObjectStore(name: string, options: { keyPath: string }) {
      stores.set(name, { keyPath: options.keyPath, records: new Map() });
    },
    close() {},
    transaction(name: string) {
      const transaction = { oncomplete: null as Handler, onabort: null as Handler, error: null };
      const complete = () => setTimeout(() => transaction.oncomplete?.(), 0);
      const store = stores.get(name);
      if (store === undefined) throw new Error(`no object store ${name}`);
      return Object.assign(transaction, {
        objectStore: () => ({
          get: (key: string) => request(() => store.records.get(key), complete),
          getAll: () => request(() => [...store.records.values()], complete),
          put: (value: Record<string, string>) =>
            request(() => store.records.set(value[store.keyPath]!, value) && undefined, complete),
          delete: (key: string) => request(() => store.records.delete(key) && undefined, complete),
        }),
      });
    },
  });
  return {
    open(name: string) {
      const created = !databases.has(name);
      const stores = databases.get(name) ?? new Map();
      databases.set(name, stores);
      const opening: FakeRequest<ReturnType<typeof databaseOf>> = {
        result: databaseOf(stores),
        error: null,
        onsuccess: null,
        onerror: null,
        onupgradeneeded: null,
      };
      // The upgrade runs before success, as in the browser, for a database made now.
      queueMicrotask(() => {
        if (created) opening.onupgradeneeded?.();
        opening.onsuccess?.();
      });
      return opening;
    },
  };
}
