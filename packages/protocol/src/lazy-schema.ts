/**
 * A schema built the first time it is used, not when the module loads: building zod 4 schemas takes a
 * few hundred microseconds each (every instance binds its methods), and a process that imports this
 * package uses a few of its ~150. The returned object stands for the built schema in every way
 * (properties, methods, `instanceof`, `in`); the types are the schema's own.
 */
/* @__NO_SIDE_EFFECTS__ */
export function lazySchema<Schema extends object>(build: () => Schema): Schema {
  let built: Schema | undefined;
  const schema = (): Schema => {
    built ??= build();
    return built;
  };
  return new Proxy({} as Schema, {
    get: (_, key) => Reflect.get(schema(), key),
    has: (_, key) => Reflect.has(schema(), key),
    set: (_, key, value) => Reflect.set(schema(), key, value),
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(schema(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(schema(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
    ownKeys: () => Reflect.ownKeys(schema()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(schema(), key);
      // The stand-in's own target has none of these keys; a proxy may not report a non-configurable one.
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
