// The page's keys for each sign-in, in this origin's IndexedDB: a script of the origin can use them
// (sign, verify) but never read them out (`extractable: false`), so a copy of the storage holds nothing.

/** The keys of one sign-in (`sessionId`), dropped once it expires. */
export interface PageKeys {
  sessionId: string;
  /** ECDSA P-256, `sign` only: what gets the page its access token. */
  signingKey: CryptoKey;
  /** HMAC-SHA256 under the daemon's key, `verify` only: checks the daemon's answer, cannot forge one. */
  identityKey: CryptoKey;
  expiresAt: string;
}

const databaseName = "floot";
const storeName = "page-keys";

function openDatabase(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(databaseName, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(storeName, { keyPath: "sessionId" });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** One request in its own transaction; resolves once the transaction committed. */
async function inStore<T>(
  mode: IDBTransactionMode,
  use: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T> {
  const database = await openDatabase();
  try {
    return await new Promise<T>((resolve, reject) => {
      const transaction = database.transaction(storeName, mode);
      const request = use(transaction.objectStore(storeName));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onabort = () => reject(transaction.error ?? request.error);
    });
  } finally {
    database.close();
  }
}

export async function loadPageKeys(sessionId: string): Promise<PageKeys | undefined> {
  return (await inStore("readonly", (store) => store.get(sessionId))) as PageKeys | undefined;
}

/** Keeps `keys`, and drops those of sign-ins that expired (other tabs', long closed). */
export async function savePageKeys(keys: PageKeys): Promise<void> {
  const all = (await inStore("readonly", (store) => store.getAll())) as PageKeys[];
  for (const each of all.filter((stored) => Date.parse(stored.expiresAt) <= Date.now())) {
    await inStore("readwrite", (store) => store.delete(each.sessionId));
  }
  await inStore("readwrite", (store) => store.put(keys));
}
